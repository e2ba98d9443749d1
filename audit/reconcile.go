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
// The binary wires both from its configuration: Command gets a function
// that parses the environment and returns Deps{cfg.Subscriptions, the
// *calendar.Source, the *storage.Store, the *notify.Slack, cfg.TickInterval};
// serve starts NewWatcher(WatcherConfig{...the same...}, its registry).Run.
package audit

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/scheduler"
	"github.com/meetingbot/meetingbot/storage"
)

// Ledger lists the ledger rows of a subscription whose trigger time is in
// [from, to); *storage.Store provides it.
type Ledger interface {
	Range(ctx context.Context, subscription string, from, to time.Time) ([]storage.Entry, error)
}

// The packages that provide what Reconcile reads.
var (
	_ Ledger = (*storage.Store)(nil)
	_ Slack  = (*notify.Slack)(nil)
)

// Slack lists the reminder messages in a subscription's destination posted
// in [from, to]; *notify.Slack provides it.
type Slack interface {
	Reminders(ctx context.Context, sub scheduler.Subscription, from, to time.Time) ([]notify.Sent, error)
}

// Input is what Reconcile needs.
type Input struct {
	Subscriptions []scheduler.Subscription
	Source        scheduler.Source
	Ledger        Ledger
	// Slack reads the delivered messages back. Nil audits against the
	// ledger alone, which cannot see a crash duplicate. Pass a nil
	// interface, not a nil *notify.Slack.
	Slack Slack
	// From and To bound the trigger times audited: [From, To).
	From, To time.Time
	// Now is the instant of the audit; triggers after it are not due yet.
	// Zero means time.Now().
	Now time.Time
	// Interval is the bot's tick interval (TICK_INTERVAL); 30s if zero. A
	// reminder delivered more than Interval+5s after its trigger is late,
	// and one due within that span of Now and not delivered yet is pending.
	Interval time.Duration
}

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
	if in.Now.IsZero() {
		in.Now = time.Now()
	}
	if in.Interval <= 0 {
		in.Interval = 30 * time.Second
	}
	in.From, in.To, in.Now = in.From.UTC(), in.To.UTC(), in.Now.UTC()
	r := Report{From: in.From, To: in.To, Now: in.Now, Interval: Duration(in.Interval)}
	for _, sub := range in.Subscriptions {
		if err := ctx.Err(); err != nil {
			return Report{}, fmt.Errorf("audit: %w", err)
		}
		r.Subscriptions = append(r.Subscriptions, reconcileSub(ctx, in, sub))
	}
	return r, nil
}

// expectation is one reminder the contract says was due.
type expectation struct {
	item    Item
	pending bool // due so recently that the bot may not have swept yet
}

func reconcileSub(ctx context.Context, in Input, sub scheduler.Subscription) SubReport {
	sr := SubReport{Subscription: sub.ID, CountedFrom: FromLedger}

	// A trigger in [From, To) belongs to a meeting starting in
	// [From+minOffset, To+maxOffset); the source reads (from, to].
	meetings, err := in.Source.Meetings(ctx, sub, in.From.Add(sub.MinOffset()-time.Second), in.To.Add(sub.MaxOffset()))
	if err != nil {
		sr.Error = fmt.Sprintf("read calendar %s: %v", sub.CalendarID, err)
		return sr
	}
	entries, err := in.Ledger.Range(ctx, sub.ID, in.From, in.To)
	if err != nil {
		sr.Error = fmt.Sprintf("read ledger: %v", err)
		return sr
	}
	ledger := make(map[string]storage.Entry, len(entries))
	for _, e := range entries {
		ledger[e.Key] = e
	}

	expected, byEvent := expect(in, sub, meetings)
	sr.Expected = len(expected)

	delivered := map[string][]Delivery{}
	info := map[string]Item{} // what a delivery says about its reminder
	if in.Slack != nil {
		sent, err := in.Slack.Reminders(ctx, sub, in.From.Add(-historyMargin), in.To.Add(sub.MaxOffset()+scheduler.StartGrace+historyMargin))
		if err != nil {
			sr.SlackError = err.Error()
		} else {
			sr.CountedFrom = FromSlack
			for _, s := range sent {
				if s.Subscription != sub.ID {
					continue // another subscription sharing the destination
				}
				it := itemOf(sub.ID, s.Key, s.EventID, s.Start, s.Offset)
				if s.Start.IsZero() && inPeriod(s.Posted, in) {
					// Without a start there is no key to match; show it.
					it.Trigger, it.Reason = time.Time{}, "reminder metadata unreadable"
					it.Deliveries = []Delivery{{Channel: s.Channel, TS: s.TS, Posted: s.Posted.UTC(), From: FromSlack}}
					sr.Unexpected = append(sr.Unexpected, it)
					continue
				}
				if !inPeriod(it.Trigger, in) {
					continue
				}
				info[s.Key] = it
				delivered[s.Key] = append(delivered[s.Key], Delivery{Channel: s.Channel, TS: s.TS, Posted: s.Posted.UTC(), From: FromSlack})
			}
		}
	}
	if sr.CountedFrom == FromLedger {
		for _, e := range entries {
			if e.Outcome == storage.Sent {
				info[e.Key] = itemOf(sub.ID, e.Key, e.EventID, e.Start, e.Offset)
				delivered[e.Key] = []Delivery{{Channel: e.Channel, TS: e.MessageTS, Posted: e.SettledAt, From: FromLedger}}
			}
		}
	}

	lateAfter := in.Interval + scheduler.LateSlack
	for _, x := range expected {
		it := x.item
		ds := delivered[it.Key]
		e, inLedger := ledger[it.Key]
		switch {
		case len(ds) == 0 && x.pending:
			it.Reason = "due within the last tick; not judged yet"
			sr.Pending = append(sr.Pending, it)
		case len(ds) == 0:
			it.Reason = missingReason(e, inLedger, sr.CountedFrom)
			sr.Missing = append(sr.Missing, it)
		default:
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
	}

	// Deliveries nobody expected: a meeting moved or cancelled after its
	// reminder went out, or something wrong.
	for key, ds := range delivered {
		if _, ok := expected[key]; ok {
			continue
		}
		it := info[key]
		it.Title = byEvent[it.EventID].Title
		it.Deliveries = ds
		it.Delay = Duration(ds[0].Posted.Sub(it.Trigger))
		superseded, why := unexpectedReason(it, sub, byEvent, in.Now)
		it.Reason = why
		switch {
		case len(ds) > 1:
			it.Reason = duplicateReason(len(ds), ledger[key], hasKey(ledger, key)) + "; " + why
			sr.Duplicated = append(sr.Duplicated, it)
		case superseded:
			sr.Superseded = append(sr.Superseded, it)
		default:
			sr.Unexpected = append(sr.Unexpected, it)
		}
	}
	for _, l := range []*[]Item{&sr.Delivered, &sr.Missing, &sr.Duplicated, &sr.Late, &sr.Superseded, &sr.Unexpected, &sr.Pending} {
		slices.SortFunc(*l, byTrigger)
	}
	return sr
}

// expect derives the reminders due in the period from the meetings as the
// calendar has them now, by key, and indexes the meetings by event ID.
func expect(in Input, sub scheduler.Subscription, meetings []scheduler.Meeting) (map[string]expectation, map[string]scheduler.Meeting) {
	expected := map[string]expectation{}
	byEvent := make(map[string]scheduler.Meeting, len(meetings))
	for _, m := range meetings {
		byEvent[m.ID] = m
		for _, o := range sub.Offsets {
			it := itemOf(sub.ID, scheduler.Key(m.KeyID(), o, m.Start), m.ID, m.Start, o)
			if !inPeriod(it.Trigger, in) || it.Trigger.After(in.Now) {
				continue
			}
			it.Title = m.Title
			expected[it.Key] = expectation{item: it, pending: in.Now.Sub(it.Trigger) <= in.Interval+scheduler.LateSlack}
		}
	}
	return expected, byEvent
}

func itemOf(sub, key, eventID string, start time.Time, offset time.Duration) Item {
	start = start.UTC()
	return Item{Subscription: sub, Key: key, EventID: eventID, Start: start, Offset: Duration(offset), Trigger: start.Add(-offset)}
}

func inPeriod(t time.Time, in Input) bool {
	return !t.Before(in.From) && t.Before(in.To)
}

func hasKey(m map[string]storage.Entry, key string) bool {
	_, ok := m[key]
	return ok
}

func byTrigger(a, b Item) int {
	return cmp.Or(a.Trigger.Compare(b.Trigger), strings.Compare(a.Key, b.Key))
}

// missingReason says what the ledger knows of an expected reminder that was
// not delivered.
func missingReason(e storage.Entry, found bool, countedFrom string) string {
	if !found {
		return "unknown: no ledger row (the bot never saw it due)"
	}
	switch {
	case e.Outcome == storage.Skipped && e.Reason == "started":
		return "skipped: the bot was down until the meeting started"
	case e.Outcome == storage.Skipped:
		return "skipped: " + e.Reason
	case e.Outcome == storage.Failed && e.Retryable:
		return "failed, retrying: " + e.Reason
	case e.Outcome == storage.Failed:
		return "failed permanently: " + e.Reason
	case e.Outcome == storage.Sending:
		return "claimed at " + stamp(e.ClaimedAt) + " and never settled (a send in flight, or a crash)"
	case e.Outcome == storage.Sent && countedFrom == FromSlack:
		return fmt.Sprintf("the ledger says sent (ts %s) but the message is not in Slack (deleted?)", e.MessageTS)
	}
	return fmt.Sprintf("ledger outcome %q", e.Outcome)
}

func duplicateReason(n int, e storage.Entry, found bool) string {
	switch {
	case !found:
		return fmt.Sprintf("in Slack %d times; no ledger row", n)
	case e.Outcome == storage.Sent:
		return fmt.Sprintf("in Slack %d times, once in the ledger (ts %s): a send repeated after a crash or a lost answer", n, e.MessageTS)
	}
	return fmt.Sprintf("in Slack %d times; ledger outcome %q", n, e.Outcome)
}

func lateReason(it Item, e storage.Entry, found bool) string {
	why := "delivered " + time.Duration(it.Delay).Round(time.Second).String() + " after its trigger"
	if found && e.Late {
		why += "; found due after its time had passed (bot down or stalled, or the meeting created or moved late)"
	}
	return why
}

// unexpectedReason says why a delivered reminder was not expected, and
// whether that is the calendar changing after the fact (superseded) rather
// than an error.
func unexpectedReason(it Item, sub scheduler.Subscription, byEvent map[string]scheduler.Meeting, now time.Time) (superseded bool, why string) {
	m, ok := byEvent[it.EventID]
	switch {
	case it.Trigger.After(now):
		return false, "posted before its trigger time"
	case !ok:
		return true, "the meeting is no longer on the calendar: cancelled, declined, or moved outside the audited window"
	case !m.Start.Equal(it.Start):
		return true, "the meeting moved to " + stamp(m.Start)
	case !slices.Contains(sub.Offsets, time.Duration(it.Offset)):
		return false, "offset " + it.Offset.String() + " is not configured for this subscription"
	}
	return false, "not expected: the meeting and offset match, yet the trigger was not due in the period"
}
