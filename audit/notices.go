package audit

import (
	"context"
	"slices"

	"github.com/meetingbot/meetingbot"
)

// Notices lists the people who ever turned invitation notices on, on or
// off now; both stores provide it. With Deps.Notices set, the audit
// judges their notices too.
type Notices interface {
	InviteSettings(ctx context.Context) ([]meetingbot.InviteSettings, error)
}

// reconcileNotices audits the invitation notices first due in the period:
// each person is a SubReport named by their notices' pseudo-subscription
// (meetingbot.InviteSubscription), one Item per notice keyed by its key
// (meetingbot.InviteKey), Start its meeting's start and Trigger when it
// was first due. Which invitation deserved a notice is decided when the
// calendar is read, so the ledger says what was due: a notice recorded
// skipped (made before notices were on, its meeting started) is not due;
// any other is, and is judged against the DMs in the person's history (or
// the ledger when history cannot be read) as a reminder is: delivered,
// late, duplicated, missing or pending. A notice in Slack that the ledger
// does not know, or says was skipped, is unexpected.
func reconcileNotices(ctx context.Context, p period, notices Notices) []SubReport {
	sets, err := notices.InviteSettings(ctx)
	if err != nil {
		return []SubReport{{Subscription: "notices", CountedFrom: FromLedger, Error: "read invitation notices: " + err.Error()}}
	}
	var out []SubReport
	for _, set := range sets {
		if ctx.Err() != nil {
			break
		}
		sub := meetingbot.Subscription{ID: meetingbot.InviteSubscription(set.UserID), Destination: set.UserID}
		if sr, ok := reconcileKeyed(ctx, p, sub, "a notice the ledger does not know"); ok {
			out = append(out, sr)
		}
	}
	return out
}

// reconcileKeyed audits the messages of the pseudo-subscription sub whose
// ledger says which were due (a person's notices, a channel's change
// notices or agendas), posted to sub.Destination; unknown is the reason
// given a message of it the ledger does not know. ok is false when it had
// none in the period.
func reconcileKeyed(ctx context.Context, p period, sub meetingbot.Subscription, unknown string) (SubReport, bool) {
	sr := SubReport{Subscription: sub.ID, CountedFrom: FromLedger}
	entries, err := p.Ledger.Range(ctx, sub.ID, p.from, p.to)
	if err != nil {
		sr.Error = "read ledger: " + err.Error()
		return sr, true
	}
	if len(entries) == 0 {
		return sr, false
	}
	lateAfter := p.Interval + meetingbot.LateSlack
	by := map[string][]Delivery{}
	fromSlack := false
	if p.Slack != nil {
		sent, err := p.Slack.Reminders(ctx, sub, p.from.Add(-historyMargin), p.to.Add(lateAfter+historyMargin))
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
	known := map[string]bool{}
	for _, e := range entries {
		known[e.Key] = true
		it := Item{Subscription: sub.ID, Key: e.Key, EventID: e.EventID, Start: e.Start, Trigger: e.TriggerAt}
		ds := by[e.Key]
		if e.Outcome == meetingbot.Skipped {
			if len(ds) > 0 {
				it.Deliveries, it.Delay = ds, Duration(ds[0].Posted.Sub(it.Trigger))
				it.Reason = "sent, though the ledger says skipped (" + e.Reason + ")"
				sr.Unexpected = append(sr.Unexpected, it)
			}
			continue
		}
		sr.Expected++
		pending := e.Outcome != meetingbot.Sent && p.now.Sub(e.TriggerAt) <= lateAfter
		judge(&sr, it, ds, pending, e, true, lateAfter)
	}
	for key, ds := range by {
		if known[key] || ds[0].Posted.Before(p.from) || !ds[0].Posted.Before(p.to) {
			continue // another period's, or known
		}
		sr.Unexpected = append(sr.Unexpected, Item{Subscription: sub.ID, Key: key, Deliveries: ds, Reason: unknown})
	}
	for _, l := range []*[]Item{&sr.Delivered, &sr.Missing, &sr.Duplicated, &sr.Late, &sr.Unexpected, &sr.Pending} {
		slices.SortFunc(*l, byTrigger)
	}
	return sr, true
}
