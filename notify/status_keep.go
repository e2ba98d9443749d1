package notify

import (
	"context"
	"strconv"
	"time"

	"github.com/meetingbot/meetingbot"
)

// keptStatus is what Reconsider found for the entry that set a status
// until entry: the status shown expires at now, or is the person's own
// (left).
type keptStatus struct {
	entry, now time.Time
	left       bool
}

// movedKey is the ledger key of a status moved to expire at until: the
// record that the status is the bot's, for whichever replica looks next.
func movedKey(until time.Time) string { return "moved:" + strconv.FormatInt(until.Unix(), 10) }

// Keep checks, at now, each status the bot set for subs that may still
// show against the meetings in the mirror (Want, no call to Slack): one
// whose meeting was cancelled, declined, moved, cut short or extended is
// made what the calendar says (Reconsider), and a move is recorded in the
// ledger. What Reconsider found is kept, so that a status is read from
// Slack again only when the calendar changes what it calls for.
func (s *Status) Keep(ctx context.Context, subs []meetingbot.Subscription, now time.Time) {
	for _, sub := range subs {
		entries, err := s.cfg.Ledger.Range(ctx, sub.ID, now.Add(-recordedSpan), now.Add(time.Second))
		if err != nil {
			continue
		}
		var until time.Time // the latest status the entries set that may still show
		for _, e := range entries {
			if exp, ok := Showing(e, now); ok && exp.After(until) {
				until = exp
			}
		}
		s.mu.Lock()
		k, seen := s.kept[sub.ID]
		if !until.After(now) {
			delete(s.kept, sub.ID)
		}
		s.mu.Unlock()
		if until.IsZero() {
			continue
		}
		shows := until
		if seen && k.entry.Equal(until) {
			if k.left || !k.now.After(now) {
				continue // the person's own status, or cleared
			}
			shows = k.now
		}
		w, err := s.Want(ctx, sub, now)
		if err != nil || w.Allows(shows) {
			continue
		}
		what, exp, err := s.Reconsider(ctx, sub, now)
		if err != nil {
			s.log.Warn("cannot make a status follow its meetings; tried again shortly", "subscription", sub.ID, "err", err)
			continue
		}
		if what == Moved {
			s.recordMove(ctx, sub, exp, now)
		}
		s.mu.Lock()
		s.kept[sub.ID] = keptStatus{entry: until, now: exp, left: what == Left}
		s.mu.Unlock()
	}
}

// recordMove records in the ledger that sub's status was moved to expire
// at until, as a status sent: the bot's own from then on (ours), on every
// replica.
func (s *Status) recordMove(ctx context.Context, sub meetingbot.Subscription, until, now time.Time) {
	e := meetingbot.Entry{Subscription: sub.ID, Kind: sub.Kind, Key: movedKey(until), Start: now, TriggerAt: now}
	st, _, err := s.cfg.Ledger.Claim(ctx, e, now, now.Add(time.Minute))
	if err != nil || st != meetingbot.Claimed {
		if err != nil {
			s.log.Warn("cannot record a status moved", "subscription", sub.ID, "err", err)
		}
		return
	}
	e.Outcome, e.Channel, e.MessageTS = meetingbot.Sent, sub.Destination, strconv.FormatInt(until.Unix(), 10)
	e.Reason = "moved to follow its meetings"
	if err := s.cfg.Ledger.Record(ctx, e, now); err != nil {
		s.log.Warn("cannot record a status moved", "subscription", sub.ID, "err", err)
	}
}
