package scheduler

import (
	"context"
	"slices"
	"time"

	"github.com/meetingbot/meetingbot"
)

// A subscription that reminds "as my calendar says" reminds at each
// meeting's own popup reminders, keyed by their minutes as fixed offsets
// are: a popup changed from 2 to 4 minutes before the 2-minute one went out
// is a new key, planned at its new time, and the old one's timer finds it
// gone at its check (stillWanted). A popup changed after it went out is
// the same reminder at another time, and is not sent again: while the
// ledger holds a sent reminder of the meeting at a popup's minutes the
// meeting no longer has, a popup that appeared since the sweeps saw the
// meeting (the earliest first, one per such sent reminder) is settled as
// skipped, ReasonReminderChanged, instead of sent. A popup removed after it
// went out makes no other one new: the meeting's other popups still
// remind. What the sweeps saw is kept in memory: a popup changed while no
// process swept the meeting is sent at its new time.

// popups are a meeting's popup offsets as the sweeps saw them: now, and
// those that appeared at the last change seen.
type popups struct {
	seen  []time.Duration
	fresh []time.Duration
}

// notePopups records the popups of sub's meetings as a fresh reading has
// them, and those that appeared since the last one; meetings no longer
// listed are forgotten.
func (s *Scheduler) notePopups(sub meetingbot.Subscription, meetings []meetingbot.Meeting) {
	if !sub.OnCalendar {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	before := s.popups[sub.ID]
	now := make(map[string]popups, len(meetings))
	for _, m := range meetings {
		id := meetingbot.Key(m.KeyID(), 0, m.Start)
		p := popups{seen: m.Reminders}
		if b, ok := before[id]; ok {
			p.fresh = b.fresh
			if !slices.Equal(b.seen, m.Reminders) {
				p.fresh = nil
				for _, o := range m.Reminders {
					if !slices.Contains(b.seen, o) {
						p.fresh = append(p.fresh, o)
					}
				}
			}
		}
		now[id] = p
	}
	if s.popups == nil {
		s.popups = map[string]map[string]popups{}
	}
	s.popups[sub.ID] = now
}

// fresh returns the popups of r's meeting that appeared at the last change
// the sweeps saw.
func (s *Scheduler) fresh(r meetingbot.Reminder) []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.popups[r.Subscription.ID][meetingbot.Key(r.Meeting.KeyID(), 0, r.Meeting.Start)].fresh
}

// settleChanged returns the reminders of rs to send, one subscription's
// due at one instant, after skipping those that stand for a popup reminder
// changed after it went out. Only a subscription with OnCalendar and a
// reminder at a popup's minutes costs a ledger read; an error leaves rs
// as they are.
func (s *Scheduler) settleChanged(ctx context.Context, rs []meetingbot.Reminder) []meetingbot.Reminder {
	if len(rs) == 0 || !slices.ContainsFunc(rs, func(r meetingbot.Reminder) bool { return r.Subscription.FromCalendar(r.Offset) }) {
		return rs
	}
	sub := rs[0].Subscription
	sent, err := s.ledger.Followed(ctx, sub.ID, s.clock.Now().UTC())
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("read the sent reminders of changed popups", "subscription", sub.ID, "err", err)
		}
		return rs
	}
	keep := rs[:0:0]
	for _, r := range rs {
		if !r.Subscription.FromCalendar(r.Offset) || !replaces(r, s.fresh(r), sent) || !s.skipChanged(ctx, r) {
			keep = append(keep, r)
		}
	}
	return keep
}

// replaces reports whether r, a trigger at one of its meeting's popups,
// is the new time of a popup changed after it went out: r's popup is among
// fresh, those that appeared at the meeting's last change, and sent holds
// more reminders of the meeting at popups it no longer has than fresh has
// unsent popups with an earlier trigger than r's.
func replaces(r meetingbot.Reminder, fresh []time.Duration, sent []meetingbot.Entry) bool {
	if !slices.Contains(fresh, r.Offset) {
		return false
	}
	now := r.Subscription.OffsetsFor(r.Meeting)
	gone := 0
	done := map[string]bool{}
	for _, e := range sent {
		if e.EventID != r.Meeting.ID || !e.Start.Equal(r.Meeting.Start) {
			continue
		}
		done[e.Key] = true
		if r.Subscription.FromCalendar(e.Offset) && !slices.Contains(now, e.Offset) {
			gone++
		}
	}
	earlier := 0
	for _, o := range now {
		k := meetingbot.Key(r.Meeting.KeyID(), o, r.Meeting.Start)
		if o > r.Offset && slices.Contains(fresh, o) && !done[k] {
			earlier++
		}
	}
	return gone > earlier
}

// skipChanged records r skipped, ReasonReminderChanged, when its key is
// new to the ledger, and reports whether it did; any other key is left to
// the usual claim (a settled one is nothing, an interrupted send is looked
// up).
func (s *Scheduler) skipChanged(ctx context.Context, r meetingbot.Reminder) bool {
	log := s.log.With("subscription", r.Subscription.ID, "key", r.Key)
	if found, err := s.ledger.Entries(ctx, r.Subscription.ID, []string{r.Key}); err != nil || len(found) > 0 {
		return false
	}
	e := entryOf(r)
	now := s.clock.Now().UTC()
	status, _, err := s.ledger.Claim(ctx, e, now, now.Add(s.opts.Lease))
	if err != nil || status != meetingbot.Claimed {
		if err != nil && ctx.Err() == nil {
			log.Error("claim reminder", "err", err)
		}
		return false
	}
	e.Outcome, e.Code = meetingbot.Skipped, meetingbot.ReasonReminderChanged
	e.Reason = "its popup reminder was changed in Google Calendar after it went out"
	log.Info("popup reminder changed after it went out; not sent again")
	return s.record(ctx, log, e)
}
