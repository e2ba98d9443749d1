package audit

import (
	"context"
	"slices"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Timers lists the durable timers whose instant falls in [from, to), in
// any state; both stores provide it. With Deps.Timers set, the audit
// judges the snoozes people asked for as it judges reminders.
type Timers interface {
	TimerRange(ctx context.Context, from, to time.Time) ([]meetingbot.Timer, error)
}

// snoozeLateness is how long after its instant a snooze's DM may still be
// posted: until its meeting's end, which the audit bounds so.
const snoozeLateness = 12 * time.Hour

// reconcileSnoozes audits the snoozes whose instant falls in the period:
// each person is a SubReport named by their snoozes' pseudo-subscription
// (meetingbot.SnoozeSubscription), one Item per timer keyed by its key,
// Start its meeting's start and Trigger its instant. A snooze is due
// unless it moved (its wait goes on under another key, its own item),
// was cancelled by its person, or ended without a message because its
// meeting was cancelled or had ended; a due snooze is judged against the
// DMs in the person's history (or the ledger when history cannot be read)
// as a reminder is: delivered, late, duplicated, missing or pending.
func reconcileSnoozes(ctx context.Context, p period, timers Timers) []SubReport {
	all, err := timers.TimerRange(ctx, p.from, p.to)
	if err != nil {
		return []SubReport{{Subscription: "snoozes", CountedFrom: FromLedger, Error: "read timers: " + err.Error()}}
	}
	byUser := map[string][]meetingbot.Timer{}
	var users []string
	for _, t := range all {
		s, ok := meetingbot.ParseSnooze(t)
		if !ok || t.FireAt.After(p.now) {
			continue
		}
		if byUser[s.User] == nil {
			users = append(users, s.User)
		}
		byUser[s.User] = append(byUser[s.User], t)
	}
	slices.Sort(users)
	var out []SubReport
	for _, user := range users {
		if ctx.Err() != nil {
			break
		}
		out = append(out, reconcileSnooze(ctx, p, user, byUser[user]))
	}
	return out
}

func reconcileSnooze(ctx context.Context, p period, user string, timers []meetingbot.Timer) SubReport {
	sub := meetingbot.Subscription{ID: meetingbot.SnoozeSubscription(user), Destination: user}
	sr := SubReport{Subscription: sub.ID, CountedFrom: FromLedger}
	entries, err := p.Ledger.Range(ctx, sub.ID, p.from, p.to)
	if err != nil {
		sr.Error = "read ledger: " + err.Error()
		return sr
	}
	ledger := map[string]meetingbot.Entry{}
	for _, e := range entries {
		ledger[e.Key] = e
	}
	by := map[string][]Delivery{}
	fromSlack := false
	if p.Slack != nil {
		sent, err := p.Slack.Reminders(ctx, sub, p.from.Add(-historyMargin), p.to.Add(snoozeLateness+historyMargin))
		if err != nil {
			sr.SlackError = err.Error()
		} else {
			fromSlack, sr.CountedFrom = true, FromSlack
			for _, d := range sent {
				if d.Subscription == sub.ID {
					by[d.Key] = append(by[d.Key], Delivery{Channel: d.Channel, TS: d.TS, Posted: d.Posted.UTC(), From: FromSlack})
				}
			}
		}
	}
	if !fromSlack {
		for _, e := range entries {
			if e.Outcome == meetingbot.Sent {
				by[e.Key] = []Delivery{{Channel: e.Channel, TS: e.MessageTS, Posted: e.RecordedAt, From: FromLedger}}
			}
		}
	}
	lateAfter := p.Interval + meetingbot.LateSlack
	for _, t := range timers {
		s, _ := meetingbot.ParseSnooze(t)
		it := Item{Subscription: sub.ID, Key: t.Key, EventID: s.Meeting.ID, Title: s.Meeting.Title, Start: s.Meeting.Start,
			Offset: Duration(max(s.Meeting.Start.Sub(t.FireAt), 0)), Trigger: t.FireAt}
		ds := by[t.Key]
		notDue := t.State == meetingbot.TimerMoved || t.State == meetingbot.TimerCancelled ||
			t.Code == meetingbot.ReasonMeetingCancelled || t.Code == meetingbot.ReasonMeetingEnded
		if notDue {
			if len(ds) > 0 {
				it.Deliveries, it.Delay = ds, Duration(ds[0].Posted.Sub(it.Trigger))
				it.Reason = "sent, though the timer says " + string(t.State) + " (" + t.Reason + ")"
				sr.Unexpected = append(sr.Unexpected, it)
			}
			continue
		}
		sr.Expected++
		e, inLedger := ledger[t.Key]
		pending := t.State == meetingbot.TimerPending && p.now.Sub(t.FireAt) <= lateAfter
		judge(&sr, it, ds, pending, e, inLedger, lateAfter)
	}
	for _, l := range []*[]Item{&sr.Delivered, &sr.Missing, &sr.Duplicated, &sr.Late, &sr.Unexpected, &sr.Pending} {
		slices.SortFunc(*l, byTrigger)
	}
	return sr
}
