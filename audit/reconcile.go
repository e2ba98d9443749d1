// Package audit reconciles, per meeting instance and offset, the reminders
// the contract says were due with the reminders actually delivered.
//
// Counting alone cannot see a skipped reminder hidden behind a doubled one:
// the totals still match. Reconcile re-reads the calendars, derives the
// expected reminders of a period (trigger in [from, to), trigger <= now), and
// matches them by key (eventId:offset:startAt, instants only) against the
// reminder messages in Slack, found by their metadata, or against the ledger
// when history cannot be read. The same reconciliation backs the `bot audit`
// command (Command) and a check inside the running bot (Watcher).
//
// The package reads through three small interfaces of its own: a Source of
// meetings, a Ledger of entries and the Slack messages (Slack); it imports
// only the root package's words.
package audit

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Source reads the meetings of a subscription's calendar that start in
// (from, to]; *calendar.Source provides it.
type Source interface {
	Meetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error)
}

// Ledger lists the ledger rows of a subscription whose trigger time is in
// [from, to); *sqlite.Store provides it.
type Ledger interface {
	Range(ctx context.Context, subscription string, from, to time.Time) ([]meetingbot.Entry, error)
}

// Slack lists the reminder messages in a subscription's destination posted
// in [from, to]; *notify.Slack provides it.
type Slack interface {
	Reminders(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Delivery, error)
}

// Deps is what an audit reads, built from the same configuration as the
// bot: its subscriptions, the Calendar source, the ledger, the Slack client,
// the tick interval and the clock.
type Deps struct {
	Subscriptions []meetingbot.Subscription
	Source        Source
	Ledger        Ledger
	// Slack reads the delivered messages back. Nil audits against the
	// ledger alone, which cannot see a crash duplicate. Pass a nil
	// interface, not a nil *notify.Slack.
	Slack Slack
	// Interval is the bot's tick interval (TICK_INTERVAL); 30s if zero. A
	// reminder delivered more than Interval+LateSlack after its trigger is
	// late, and one due within that span of now and not delivered yet is
	// pending.
	Interval time.Duration
	// Now is the clock; time.Now if nil. Triggers after its reading are
	// not due yet.
	Now func() time.Time
	// Agendas, when set, audits the daily agendas too: expected (a day
	// with meetings) against sent, per person and local day.
	Agendas *AgendaDeps
	// Timers, when set, audits the snoozes people asked for too: each
	// timer due against the DMs sent (snooze.go).
	Timers Timers
	// Notices, when set, audits the notices of new invitations too: each
	// one the ledger says was due against the DMs sent (notices.go).
	Notices Notices
	// Channels, when set, audits the channels' change notices and
	// agendas too: each one the ledger says was due against the
	// channel's messages (channels.go).
	Channels Channels
	// Paused, when set, names the connections that stopped and the
	// subscriptions they pause (paused.go).
	Paused PausedReader
}

// Input is one reconciliation: Deps over the trigger times [From, To).
type Input struct {
	Deps
	From, To time.Time
}

// period is an Input read once: its bounds and its instant, in UTC.
type period struct {
	Deps
	from, to, now time.Time
}

func (p period) contains(t time.Time) bool { return !t.Before(p.from) && t.Before(p.to) }

// historyMargin widens the span of Slack history read on both sides: clocks
// disagree a little, and a send may take a while.
const historyMargin = 5 * time.Minute

// Reconcile audits every subscription of in over [in.From, in.To). A
// subscription whose calendar or ledger cannot be read is reported with its
// Error and the others go on; a Slack history that cannot be read is noted
// in SlackError and deliveries are counted from the ledger. Reconcile itself
// fails only on a malformed Input or when ctx ends.
func Reconcile(ctx context.Context, in Input) (Report, error) {
	if in.Source == nil || in.Ledger == nil {
		return Report{}, fmt.Errorf("audit: reconcile needs a calendar source and a ledger")
	}
	if !in.From.Before(in.To) {
		return Report{}, fmt.Errorf("audit: empty period [%s, %s)", in.From.UTC().Format(time.RFC3339), in.To.UTC().Format(time.RFC3339))
	}
	p := period{Deps: in.Deps, from: in.From.UTC(), to: in.To.UTC()}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Interval <= 0 {
		p.Interval = meetingbot.DefaultTickInterval
	}
	p.now = p.Now().UTC()
	r := Report{From: p.from, To: p.to, Now: p.now, Interval: Duration(p.Interval)}
	for _, sub := range p.Subscriptions {
		if err := ctx.Err(); err != nil {
			return Report{}, fmt.Errorf("audit: %w", err)
		}
		r.Subscriptions = append(r.Subscriptions, reconcileSub(ctx, p, sub))
	}
	if p.Agendas != nil {
		r.Subscriptions = append(r.Subscriptions, reconcileAgendas(ctx, p, p.Agendas)...)
		if err := ctx.Err(); err != nil {
			return Report{}, fmt.Errorf("audit: %w", err)
		}
	}
	if p.Timers != nil {
		r.Subscriptions = append(r.Subscriptions, reconcileSnoozes(ctx, p, p.Timers)...)
		if err := ctx.Err(); err != nil {
			return Report{}, fmt.Errorf("audit: %w", err)
		}
	}
	if p.Notices != nil {
		r.Subscriptions = append(r.Subscriptions, reconcileNotices(ctx, p, p.Notices)...)
		if err := ctx.Err(); err != nil {
			return Report{}, fmt.Errorf("audit: %w", err)
		}
	}
	if p.Channels != nil {
		r.Subscriptions = append(r.Subscriptions, reconcileChannels(ctx, p, p.Channels)...)
		if err := ctx.Err(); err != nil {
			return Report{}, fmt.Errorf("audit: %w", err)
		}
	}
	readPaused(ctx, p, &r)
	return r, nil
}

// expectation is one reminder the contract says was due.
type expectation struct {
	item    Item
	pending bool // due so recently that the bot may not have swept yet
}

// reconcileSub audits one subscription: it reads the calendar and the
// ledger, finds what was delivered, and judges each reminder.
func reconcileSub(ctx context.Context, p period, sub meetingbot.Subscription) SubReport {
	sr := SubReport{Subscription: sub.ID, CountedFrom: FromLedger}
	// A trigger in [from, to) belongs to a meeting starting in
	// [from+minOffset, to+maxOffset); the source reads (from, to].
	meetings, err := p.Source.Meetings(ctx, sub, p.from.Add(sub.MinOffset()-time.Second), p.to.Add(sub.MaxOffset()))
	if err != nil {
		sr.Error = fmt.Sprintf("read calendar %s: %v", sub.CalendarID, err)
		return sr
	}
	entries, err := p.Ledger.Range(ctx, sub.ID, p.from, p.to)
	if err != nil {
		sr.Error = fmt.Sprintf("read ledger: %v", err)
		return sr
	}
	ledger := make(map[string]meetingbot.Entry, len(entries))
	for _, e := range entries {
		ledger[e.Key] = e
	}
	expected, byEvent := expect(p, sub, meetings)
	sr.Expected = len(expected)
	d := readDeliveries(ctx, p, sub, entries, &sr)
	judgeExpected(p, expected, d, ledger, &sr)
	judgeUnexpected(p, sub, expected, byEvent, d, ledger, &sr)
	for _, l := range []*[]Item{&sr.Delivered, &sr.Missing, &sr.Duplicated, &sr.Late, &sr.Superseded, &sr.Unexpected, &sr.Pending} {
		slices.SortFunc(*l, byTrigger)
	}
	return sr
}

// delivered is what reached Slack in the period, by key, and what each
// delivery says about its reminder.
type delivered struct {
	by   map[string][]Delivery
	info map[string]Item
}

// readDeliveries reads the subscription's reminders back from Slack or, when
// Slack cannot be read, from the ledger's sent entries, and notes which in
// sr.CountedFrom. A message without readable metadata goes to
// sr.Unexpected.
func readDeliveries(ctx context.Context, p period, sub meetingbot.Subscription, entries []meetingbot.Entry, sr *SubReport) delivered {
	d := delivered{by: map[string][]Delivery{}, info: map[string]Item{}}
	if p.Slack != nil {
		sent, err := p.Slack.Reminders(ctx, sub, p.from.Add(-historyMargin), p.to.Add(sub.MaxOffset()+meetingbot.StartGrace+historyMargin))
		if err != nil {
			sr.SlackError = err.Error()
		} else {
			sr.CountedFrom = FromSlack
			for _, s := range sent {
				if s.Subscription != sub.ID {
					continue // another subscription sharing the destination
				}
				it := itemOf(sub.ID, s.Key, s.EventID, s.Start, s.Offset)
				if s.Start.IsZero() && p.contains(s.Posted) {
					// Without a start there is no key to match; show it.
					it.Trigger, it.Reason = time.Time{}, "reminder metadata unreadable"
					it.Deliveries = []Delivery{{Channel: s.Channel, TS: s.TS, Posted: s.Posted.UTC(), From: FromSlack}}
					sr.Unexpected = append(sr.Unexpected, it)
					continue
				}
				if !p.contains(it.Trigger) {
					continue
				}
				d.info[s.Key] = it
				d.by[s.Key] = append(d.by[s.Key], Delivery{Channel: s.Channel, TS: s.TS, Posted: s.Posted.UTC(), From: FromSlack})
			}
			return d
		}
	}
	for _, e := range entries {
		if e.Outcome == meetingbot.Sent {
			d.info[e.Key] = itemOf(sub.ID, e.Key, e.EventID, e.Start, e.Offset)
			d.by[e.Key] = []Delivery{{Channel: e.Channel, TS: e.MessageTS, Posted: e.RecordedAt, From: FromLedger}}
		}
	}
	return d
}

// judge files one expected reminder, delivered as ds (first post first),
// under pending, missing, duplicated or delivered, and under late as well
// when its first delivery came more than lateAfter after its trigger. e is
// its ledger entry, if inLedger.
func judge(sr *SubReport, it Item, ds []Delivery, pending bool, e meetingbot.Entry, inLedger bool, lateAfter time.Duration) {
	switch {
	case len(ds) == 0 && pending:
		it.Reason = "due within the last tick; not judged yet"
		sr.Pending = append(sr.Pending, it)
		return
	case len(ds) == 0:
		it.Reason = missingReason(e, inLedger, sr.CountedFrom)
		sr.Missing = append(sr.Missing, it)
		return
	}
	it.Deliveries = ds
	it.Delay = Duration(ds[0].Posted.Sub(it.Trigger))
	if len(ds) > 1 {
		it.Reason = duplicateReason(len(ds), e, inLedger)
		sr.Duplicated = append(sr.Duplicated, it)
	} else {
		sr.Delivered = append(sr.Delivered, it)
	}
	if time.Duration(it.Delay) > lateAfter {
		late := it
		late.Reason = lateReason(late, e, inLedger)
		sr.Late = append(sr.Late, late)
	}
}

// judgeExpected sorts each expected reminder into delivered, duplicated,
// late, missing or pending.
func judgeExpected(p period, expected map[string]expectation, d delivered, ledger map[string]meetingbot.Entry, sr *SubReport) {
	lateAfter := p.Interval + meetingbot.LateSlack
	for _, x := range expected {
		e, inLedger := ledger[x.item.Key]
		judge(sr, x.item, d.by[x.item.Key], x.pending, e, inLedger, lateAfter)
	}
}

// judgeUnexpected sorts the deliveries nobody expected: a meeting moved or
// cancelled after its reminder went out (superseded), or something wrong.
func judgeUnexpected(p period, sub meetingbot.Subscription, expected map[string]expectation, byEvent map[string]meetingbot.Meeting, d delivered, ledger map[string]meetingbot.Entry, sr *SubReport) {
	for key, ds := range d.by {
		if _, ok := expected[key]; ok {
			continue
		}
		it := d.info[key]
		it.Title = byEvent[it.EventID].Title
		it.Deliveries = ds
		it.Delay = Duration(ds[0].Posted.Sub(it.Trigger))
		superseded, why := unexpectedReason(it, sub, byEvent, p.now)
		it.Reason = why
		e, inLedger := ledger[key]
		switch {
		case len(ds) > 1:
			it.Reason = duplicateReason(len(ds), e, inLedger) + "; " + why
			sr.Duplicated = append(sr.Duplicated, it)
		case superseded:
			it.Message, it.Reason = editedOrNot(e, inLedger, why)
			sr.Superseded = append(sr.Superseded, it)
		default:
			sr.Unexpected = append(sr.Unexpected, it)
		}
	}
}

// expect derives the reminders due in the period from the meetings as the
// calendar has them now, by key, and indexes the meetings by event ID.
func expect(p period, sub meetingbot.Subscription, meetings []meetingbot.Meeting) (map[string]expectation, map[string]meetingbot.Meeting) {
	expected := map[string]expectation{}
	byEvent := make(map[string]meetingbot.Meeting, len(meetings))
	for _, m := range meetings {
		byEvent[m.ID] = m
		for _, o := range sub.OffsetsFor(m) {
			it := itemOf(sub.ID, meetingbot.Key(m.KeyID(), o, m.Start), m.ID, m.Start, o)
			if !p.contains(it.Trigger) || it.Trigger.After(p.now) {
				continue
			}
			it.Title = m.Title
			expected[it.Key] = expectation{item: it, pending: p.now.Sub(it.Trigger) <= p.Interval+meetingbot.LateSlack}
		}
	}
	return expected, byEvent
}

func itemOf(sub, key, eventID string, start time.Time, offset time.Duration) Item {
	start = start.UTC()
	return Item{Subscription: sub, Key: key, EventID: eventID, Start: start, Offset: Duration(offset), Trigger: start.Add(-offset)}
}

func byTrigger(a, b Item) int {
	return cmp.Or(a.Trigger.Compare(b.Trigger), strings.Compare(a.Key, b.Key))
}

// missingReason says what the ledger knows of an expected reminder that was
// not delivered.
func missingReason(e meetingbot.Entry, found bool, countedFrom string) string {
	if !found {
		return "unknown: no ledger row (the bot never saw it due)"
	}
	switch {
	case e.Outcome == meetingbot.Skipped && e.Code == meetingbot.ReasonStarted:
		// Say what the ledger knows, not a guess at why: when the bot
		// first took the reminder up, against its trigger and its start.
		return fmt.Sprintf("skipped: first taken up at %s, %v after its trigger and %v after the meeting started (the bot was down or behind, or the meeting was created or moved that late)",
			stamp(e.ClaimedAt), e.ClaimedAt.Sub(e.TriggerAt).Round(time.Second), e.ClaimedAt.Sub(e.Start).Round(time.Second))
	case e.Outcome == meetingbot.Skipped:
		return "skipped: " + e.Reason
	case e.Outcome == meetingbot.Failed && e.Retryable:
		return "failed, retrying: " + e.Reason
	case e.Outcome == meetingbot.Failed:
		return "failed permanently: " + e.Reason
	case e.Outcome == meetingbot.Sending:
		return "claimed at " + stamp(e.ClaimedAt) + " and never settled (a send in flight, or a crash)"
	case e.Outcome == meetingbot.Sent && countedFrom == FromSlack:
		return fmt.Sprintf("the ledger says sent (ts %s) but the message is not in Slack (deleted?)", e.MessageTS)
	}
	return fmt.Sprintf("ledger outcome %q", e.Outcome)
}

func duplicateReason(n int, e meetingbot.Entry, found bool) string {
	switch {
	case !found:
		return fmt.Sprintf("in Slack %d times; no ledger row", n)
	case e.Outcome == meetingbot.Sent:
		return fmt.Sprintf("in Slack %d times, once in the ledger (ts %s): a send repeated after a crash or a lost answer", n, e.MessageTS)
	}
	return fmt.Sprintf("in Slack %d times; ledger outcome %q", n, e.Outcome)
}

func lateReason(it Item, e meetingbot.Entry, found bool) string {
	why := "delivered " + time.Duration(it.Delay).Round(time.Second).String() + " after its trigger"
	if found && e.Late {
		why += "; found due after its time had passed (bot down or stalled, or the meeting created or moved late)"
	}
	return why
}

// editedOrNot says whether a superseded reminder's message was edited to
// say what became of its meeting, from its ledger entry, and adds it to
// why.
func editedOrNot(e meetingbot.Entry, found bool, why string) (message, reason string) {
	switch {
	case found && e.Edit.Kind == meetingbot.EditMoved:
		return Edited, why + "; message edited: moved to " + stamp(e.Edit.MovedTo)
	case found && e.Edit.Kind == meetingbot.EditCancelled:
		return Edited, why + "; message edited: cancelled"
	case found && e.Edit.Kind == meetingbot.EditDeclined:
		return Edited, why + "; message edited: declined by the calendar's owner"
	case found && e.Edit.Code == meetingbot.ReasonPermanent:
		return NotEdited, why + "; message not edited: " + e.Edit.Reason
	case found && e.Edit.Code == meetingbot.ReasonTransient:
		return NotEdited, why + "; message not edited yet: " + e.Edit.Reason
	}
	return NotEdited, why + "; message not edited"
}

// unexpectedReason says why a delivered reminder was not expected, and
// whether that is the calendar changing after the fact (superseded) rather
// than an error.
func unexpectedReason(it Item, sub meetingbot.Subscription, byEvent map[string]meetingbot.Meeting, now time.Time) (superseded bool, why string) {
	m, ok := byEvent[it.EventID]
	switch {
	case it.Trigger.After(now):
		return false, "posted before its trigger time"
	case !ok:
		return true, "the meeting is no longer on the calendar: cancelled, declined, or moved outside the audited window"
	case !m.Start.Equal(it.Start):
		return true, "the meeting moved to " + stamp(m.Start)
	case !sub.OnCalendar && !slices.Contains(sub.Offsets, time.Duration(it.Offset)):
		return false, "offset " + it.Offset.String() + " is not configured for this subscription"
	case !slices.Contains(sub.OffsetsFor(m), time.Duration(it.Offset)):
		return true, "offset " + it.Offset.String() + " is not one of this meeting's reminders now: its calendar reminder changed, or a rule skips it"
	}
	return false, "not expected: the meeting and offset match, yet the trigger was not due in the period"
}
