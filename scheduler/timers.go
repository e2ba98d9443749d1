package scheduler

import (
	"context"
	"errors"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/clock"
)

// armed is a reminder planned on a timer. Its fields are guarded by the
// scheduler's mutex.
type armed struct {
	r     meetingbot.Reminder
	timer clock.Timer
}

// plan arms a timer for each trigger of sub's meetings that falls due in
// (now, now+horizon], and drops sub's timers of triggers the sweep no longer
// sees (moved, cancelled, or due now and sent by the sweep itself). A timer
// fires FireLead before its trigger to confirm the meeting, then sends at
// the trigger.
func (s *Scheduler) plan(ctx context.Context, sub meetingbot.Subscription, meetings []meetingbot.Meeting, now time.Time, horizon time.Duration) {
	want := map[string]meetingbot.Reminder{}
	end := now.Add(horizon)
	for _, m := range meetings {
		for _, o := range sub.Offsets {
			at := m.Start.Add(-o)
			if !at.After(now) || at.After(end) {
				continue
			}
			r := meetingbot.Reminder{Key: meetingbot.Key(m.KeyID(), o, m.Start), Subscription: sub, Meeting: m, Offset: o, TriggerAt: at.UTC()}
			want[r.Key] = r
		}
	}
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	changed := false
	have := s.timers[sub.ID]
	for key, t := range have {
		if r, ok := want[key]; ok {
			t.r = r // the latest reading: title, link
			delete(want, key)
			continue
		}
		t.timer.Stop()
		delete(have, key)
		changed = true
	}
	if len(want) > 0 && have == nil {
		have = map[string]*armed{}
		s.timers[sub.ID] = have
	}
	for key, r := range want {
		t := &armed{r: r}
		lead := r.TriggerAt.Add(-s.opts.FireLead).Sub(now)
		t.timer = s.after(max(lead, 0), func() { s.fire(ctx, sub.ID, key, t) })
		have[key] = t
		changed = true
	}
	if len(have) == 0 {
		delete(s.timers, sub.ID)
	}
	n := s.armedLocked()
	s.mu.Unlock()
	if changed && s.opts.Observer != nil {
		s.opts.Observer.Planned(n)
	}
}

// dropTimersOfOthers stops the timers of subscriptions not among subs:
// removed, or now another replica's to sweep.
func (s *Scheduler) dropTimersOfOthers(subs []meetingbot.Subscription) {
	keep := make(map[string]bool, len(subs))
	for _, sub := range subs {
		keep[sub.ID] = true
	}
	s.mu.Lock()
	changed := false
	for id, have := range s.timers {
		if keep[id] {
			continue
		}
		for _, t := range have {
			t.timer.Stop()
		}
		delete(s.timers, id)
		changed = true
	}
	n := s.armedLocked()
	s.mu.Unlock()
	if changed && s.opts.Observer != nil {
		s.opts.Observer.Planned(n)
	}
}

// armedLocked counts the timers armed; s.mu is held.
func (s *Scheduler) armedLocked() int {
	n := 0
	for _, have := range s.timers {
		n += len(have)
	}
	return n
}

// disarm removes t if it is still the timer of sub's key, and reports
// whether it was.
func (s *Scheduler) disarm(sub, key string, t *armed) bool {
	s.mu.Lock()
	have := s.timers[sub]
	current := have[key] == t
	if current {
		delete(have, key)
		if len(have) == 0 {
			delete(s.timers, sub)
		}
	}
	n := s.armedLocked()
	s.mu.Unlock()
	if current && s.opts.Observer != nil {
		s.opts.Observer.Planned(n)
	}
	return current
}

// fire runs FireLead before t's trigger: it confirms the meeting against
// the calendar and, when it still starts when planned, sends the reminder
// at its trigger. A meeting moved or cancelled since the sweep gets
// nothing at the old time, and its subscription is swept at once, which
// plans the new start or sends it late if its trigger has passed.
func (s *Scheduler) fire(ctx context.Context, sub, key string, t *armed) {
	s.mu.Lock()
	current := s.timers[sub][key] == t
	r := t.r
	s.mu.Unlock()
	if !current || ctx.Err() != nil || !s.trustClock(s.clock.Now().UTC()) {
		return // dropped, stopping, or the clock is not trusted: the sweep sees to it
	}
	m, outcome := s.check(ctx, r)
	if s.opts.Observer != nil {
		s.opts.Observer.Checked(outcome)
	}
	switch outcome {
	case meetingbot.CheckMoved, meetingbot.CheckCancelled:
		if s.disarm(sub, key, t) {
			s.log.Info("meeting changed since the sweep; no reminder for the old time",
				"subscription", sub, "key", key, "change", outcome, "new_start", m.Start)
			s.sweepOne(ctx, r.Subscription)
		}
		return
	case meetingbot.CheckConfirmed:
		r.Meeting = m // the latest title and links; the start is the same
	}
	if wait := r.TriggerAt.Sub(s.clock.Now()); wait > 0 {
		s.mu.Lock()
		if s.timers[sub][key] == t {
			t.timer = s.after(wait, func() { s.send(ctx, sub, key, t, r) })
		}
		s.mu.Unlock()
		return
	}
	s.send(ctx, sub, key, t, r)
}

// send sends t's reminder r at its trigger, through the same claim, send
// and record path as a sweep, unless t was dropped or the scheduler is
// stopping.
func (s *Scheduler) send(ctx context.Context, sub, key string, t *armed, r meetingbot.Reminder) {
	if ctx.Err() != nil || !s.disarm(sub, key, t) {
		return
	}
	s.remind(ctx, r)
}

// check reads r's meeting afresh, within CheckTimeout.
func (s *Scheduler) check(ctx context.Context, r meetingbot.Reminder) (meetingbot.Meeting, meetingbot.CheckOutcome) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.CheckTimeout)
	defer cancel()
	m, err := s.source.Meeting(ctx, r.Subscription, r.Meeting.ID)
	switch {
	case errors.Is(err, meetingbot.ErrGone):
		return m, meetingbot.CheckCancelled
	case err != nil:
		s.log.Debug("could not confirm a meeting before its reminder; sending on the last sweep's reading",
			"subscription", r.Subscription.ID, "key", r.Key, "err", err)
		return m, meetingbot.CheckUnknown
	case !m.Start.Equal(r.Meeting.Start):
		return m, meetingbot.CheckMoved
	}
	return m, meetingbot.CheckConfirmed
}
