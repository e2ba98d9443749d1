package scheduler

import (
	"cmp"
	"slices"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Posting ahead. Slack keeps a workspace-wide budget on posts ("several
// hundred messages per minute", chat.postMessage's reference) on top of a
// post a second per channel. At the top of the hour a thousand reminders
// fall due in the same second: posted at their trigger, at 300 a minute
// the last goes out three minutes late, after many of the meetings began.
// So when more reminders fall due together than the budget passes by
// their triggers, the scheduler fires some of them ahead, within a bounded
// lead: planned backwards from the latest trigger, each reminder takes the
// latest slot the budget leaves it at or before its trigger, and fires
// then if that is ahead of its trigger. Each goes through the same check,
// claim, send and record as at its trigger, so exactly once, the
// fire-time check of the meeting and the follow of a meeting moved or
// cancelled after its reminder all hold. A reminder the lead cannot bring
// early enough fires at the start of its lead and waits its turn at the
// notifier, which serves the meetings that start soonest first and posts
// nothing after a meeting's start.

// spreadEvery is how often the planner looks for reminders to post ahead.
const spreadEvery = time.Second

// burstSlack is the burst the notifier's budget allows, two seconds' worth
// of posts at once: so many reminders of a crowd go at their trigger, and
// two or three due together never go ahead.
const burstSlack = 2 * time.Second

// maxLead is how far ahead of its trigger a reminder of offset o may go:
// a quarter of its offset (meetingbot.EarlyShare: a "10 minutes before"
// reminder at most 12m30s before its meeting, a "1 minute before" one
// 1m15s), and never more than Options.Early.
func (s *Scheduler) maxLead(o time.Duration) time.Duration {
	return min(s.opts.Early, meetingbot.MaxEarly(o))
}

// spreadSoon arms the planner of posts ahead, unless it is armed or off.
func (s *Scheduler) spreadSoon() {
	if s.opts.Early <= 0 || s.opts.PostsPerMinute == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spreading || s.stopped {
		return
	}
	s.spreading = true
	s.after(spreadEvery, s.spread)
}

// early is a reminder to fire ahead of its trigger, and when to post it.
type early struct {
	t  *armed
	at time.Time
}

// spread fires the armed reminders whose slot in the posting budget has
// come ahead of their trigger, and looks again a second later while any
// timer is armed.
func (s *Scheduler) spread() {
	now := s.clock.Now()
	perSecond := s.opts.PostsPerMinute() / 60
	s.mu.Lock()
	s.spreading = false
	var all []*armed
	for _, have := range s.timers {
		for _, t := range have {
			if !t.taken && t.early != nil {
				all = append(all, t)
			}
		}
	}
	var due []early
	if perSecond > 0 {
		due = s.slots(all, now, perSecond)
	}
	if len(all) > 0 && !s.stopped {
		s.spreading = true
		s.after(spreadEvery, s.spread)
	}
	s.mu.Unlock()
	for _, e := range due {
		s.after(0, func() { e.t.early(e.at) }) // each check and send on its own
	}
}

// slots plans all backwards from the latest trigger at perSecond posts a
// second and returns those whose slot, ahead of their trigger and within
// their lead, is due to fire by now (FireLead before it). A
// subscription's reminders due at one instant fire together, as one
// digest message when there are more than DigestAbove: they take one slot
// then, else one each. s.mu is held.
func (s *Scheduler) slots(all []*armed, now time.Time, perSecond float64) []early {
	slices.SortFunc(all, func(a, b *armed) int {
		return cmp.Or(b.r.TriggerAt.Compare(a.r.TriggerAt), cmp.Compare(a.r.Subscription.ID, b.r.Subscription.ID), cmp.Compare(b.r.Key, a.r.Key))
	})
	gap := time.Duration(float64(time.Second) / perSecond)
	var due []early
	var cursor time.Time
	for len(all) > 0 {
		t := all[0]
		n := 1
		for n < len(all) && all[n].r.TriggerAt.Equal(t.r.TriggerAt) && all[n].r.Subscription.ID == t.r.Subscription.ID {
			n++
		}
		all = all[n:]
		posts := n
		if n > s.opts.DigestAbove {
			posts = 1
		}
		slot := t.r.TriggerAt
		for range posts {
			if !cursor.IsZero() && cursor.Add(-gap).Before(slot) {
				slot = cursor.Add(-gap)
			}
			cursor = slot
		}
		// The burst lets the last of the crowd go at the trigger together.
		if slot = slot.Add(burstSlack); !slot.Before(t.r.TriggerAt) {
			continue // on time at its trigger: its own timer fires it
		}
		if lead := s.maxLead(t.r.Offset); t.r.TriggerAt.Sub(slot) > lead {
			slot = t.r.TriggerAt.Add(-lead)
		}
		if !slot.Before(t.r.TriggerAt) || slot.Add(-s.opts.FireLead).After(now) {
			continue
		}
		due = append(due, early{t: t, at: later(slot, now)})
	}
	return due
}
