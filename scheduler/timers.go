package scheduler

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
)

// armed is a reminder planned on a timer. Its fields are guarded by the
// scheduler's mutex.
type armed struct {
	r     meetingbot.Reminder
	timer clock.Timer
	taken bool // fired, alone or with its siblings: it is being checked and sent
	// early fires it ahead of its trigger, to post at the instant given
	// (see early.go); nil when posting ahead is off.
	early func(at time.Time)
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
		for _, o := range sub.OffsetsFor(m) {
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
	for key := range want {
		if _, done := s.settled[sub.ID][key]; done {
			delete(want, key) // posted ahead of its trigger already
		}
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
		s.armedN--
		changed = true
	}
	if len(want) > 0 && have == nil {
		have = map[string]*armed{}
		s.timers[sub.ID] = have
	}
	// The timers count from the clock as it is now, not from the sweep's
	// instant: the read in between may have waited on the quota, and a
	// timer armed for "trigger - now" after a wait would fire that late.
	armedAt := s.clock.Now()
	for key, r := range want {
		t := &armed{r: r}
		lead := r.TriggerAt.Add(-s.opts.FireLead).Sub(armedAt)
		t.timer = s.after(max(lead, 0), func() { s.fire(ctx, sub.ID, key, t, t.r.TriggerAt) })
		if s.opts.Early > 0 {
			t.early = func(at time.Time) { s.fire(ctx, sub.ID, key, t, at) }
		}
		have[key] = t
		s.armedN++
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
	if changed {
		s.spreadSoon()
	}
}

// dropOthers stops the timers of subscriptions not among subs (removed,
// or now another replica's to sweep) and forgets their cursors, settled
// keys and popups.
func (s *Scheduler) dropOthers(subs []meetingbot.Subscription) {
	keep := make(map[string]bool, len(subs))
	for _, sub := range subs {
		keep[sub.ID] = true
	}
	s.mu.Lock()
	for id := range s.cursors {
		if !keep[id] {
			delete(s.cursors, id)
		}
	}
	for id := range s.settled {
		if !keep[id] {
			delete(s.settled, id)
		}
	}
	for id := range s.popups {
		if !keep[id] {
			delete(s.popups, id)
		}
	}
	changed := false
	for id, have := range s.timers {
		if keep[id] {
			continue
		}
		for _, t := range have {
			t.timer.Stop()
		}
		s.armedN -= len(have)
		delete(s.timers, id)
		changed = true
	}
	n := s.armedLocked()
	s.mu.Unlock()
	if changed && s.opts.Observer != nil {
		s.opts.Observer.Planned(n)
	}
}

// armedLocked returns how many timers are armed; s.mu is held.
func (s *Scheduler) armedLocked() int { return s.armedN }

// disarm removes t if it is still the timer of sub's key, and reports
// whether it was.
func (s *Scheduler) disarm(sub, key string, t *armed) bool {
	s.mu.Lock()
	have := s.timers[sub]
	current := have[key] == t
	if current {
		delete(have, key)
		s.armedN--
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

// fire runs FireLead before t's trigger, or before sendAt, the slot the
// posting budget gives it ahead of its trigger (see early.go). It takes
// every timer of the subscription due at the same instant, confirms their
// meetings against the calendar, and sends those that still start when
// planned at sendAt, together (remindAll: a digest when there are many). A meeting
// moved or cancelled since the sweep gets nothing at the old time, and its
// subscription is swept at once, which plans the new start or sends it
// late if its trigger has passed.
func (s *Scheduler) fire(ctx context.Context, sub, key string, t *armed, sendAt time.Time) {
	s.mu.Lock()
	if s.timers[sub][key] != t || t.taken {
		s.mu.Unlock()
		return // dropped, or taken by a sibling due at the same instant
	}
	var keys []string
	var group []*armed
	for k, o := range s.timers[sub] {
		if o.r.TriggerAt.Equal(t.r.TriggerAt) && !o.taken {
			o.taken = true
			if o != t || sendAt.Before(t.r.TriggerAt) {
				o.timer.Stop()
			}
			keys, group = append(keys, k), append(group, o)
		}
	}
	rs := make([]meetingbot.Reminder, len(group))
	for i, o := range group {
		rs[i] = o.r
	}
	s.mu.Unlock()
	if ctx.Err() != nil || !s.trustClock(s.clock.Now().UTC()) {
		// Stopping, or the clock is not trusted: the sweep sees to them.
		for i := range group {
			s.disarm(sub, keys[i], group[i])
		}
		return
	}

	checked := s.checkAndLookUp(ctx, rs)
	var changed bool
	var ready []int
	for i, c := range checked {
		checked[i] = stillWanted(rs[i], c)
		c = checked[i]
		if s.opts.Observer != nil {
			s.opts.Observer.Checked(c.outcome)
		}
		switch c.outcome {
		case meetingbot.CheckMoved, meetingbot.CheckCancelled, meetingbot.CheckChanged:
			if s.disarm(sub, keys[i], group[i]) {
				changed = true
				s.log.Info("meeting changed since the sweep; no reminder for the old time",
					"subscription", sub, "key", keys[i], "change", c.outcome, "new_start", c.m.Start)
			}
			continue
		case meetingbot.CheckConfirmed:
			rs[i].Meeting = c.m // the latest title and links; the start is the same
		}
		ready = append(ready, i)
	}
	if changed {
		s.sweepOne(ctx, rs[0].Subscription)
	}
	send := func() {
		var due []meetingbot.Reminder
		for _, i := range ready {
			if s.disarm(sub, keys[i], group[i]) { // not dropped by a sweep since
				due = append(due, rs[i])
			}
		}
		if len(due) > 0 && ctx.Err() == nil {
			sortReminders(due)
			s.remindAll(ctx, s.settleChanged(ctx, due))
		}
	}
	if wait := sendAt.Sub(s.clock.Now()); wait > 0 {
		s.after(wait, send) // at the trigger itself, or the slot ahead of it
		return
	}
	send()
}

// checkAndLookUp checks rs (checkAll) and, at the same time, looks their
// destination up when the notifier can (DestinationLookup), both ending by
// the trigger.
func (s *Scheduler) checkAndLookUp(ctx context.Context, rs []meetingbot.Reminder) []checked {
	l, ok := s.notify.(DestinationLookup)
	if !ok {
		return s.checkAll(ctx, rs)
	}
	var looked sync.WaitGroup
	looked.Go(func() {
		ctx, cancel := context.WithTimeout(ctx, s.untilTrigger(rs))
		defer cancel()
		if err := l.LookUp(ctx, rs[0].Subscription); err != nil && ctx.Err() == nil {
			s.log.Debug("destination lookup before the trigger failed; the send looks it up again",
				"subscription", rs[0].Subscription.ID, "err", err)
		}
	})
	defer looked.Wait()
	return s.checkAll(ctx, rs)
}

// untilTrigger is how long the work before sending rs may take: until
// their trigger, or FireLead for a timer that fired late.
func (s *Scheduler) untilTrigger(rs []meetingbot.Reminder) time.Duration {
	return max(rs[0].TriggerAt.Sub(s.clock.Now()), s.opts.FireLead)
}

// checked is what check found of one meeting.
type checked struct {
	m       meetingbot.Meeting
	outcome meetingbot.CheckOutcome
}

// checkAll checks the meetings of rs, reminders of one subscription due at
// one instant. Over a mirror (FreshSource) they are read together in one
// incremental sync of the calendar, which asks Google for every change
// since the last sync: as fresh as reading each meeting, one call however
// many they are, and it counts as the calendar's periodic resync. Without
// one, a single meeting is read alone (Source.Meeting) and several in one
// read of the window of their starts. A meeting that read does not show
// at its start is then read alone, to tell a move from a cancellation.
//
// The checks end by the trigger (or FireLead from now, for a timer that
// fired late), however long CheckTimeout is: a check is there to avoid a
// stale reminder, and must not make a fresh one late. One still waiting
// then, on a slow answer or on the Calendar quota, lets the reminders go
// out on the sweep's reading.
func (s *Scheduler) checkAll(ctx context.Context, rs []meetingbot.Reminder) []checked {
	ctx, cancel := context.WithTimeout(ctx, min(s.untilTrigger(rs), s.opts.CheckTimeout))
	defer cancel()
	out := make([]checked, len(rs))
	list := s.source.Meetings
	if f, ok := s.source.(FreshSource); ok {
		list = f.FreshMeetings // Meetings may answer from a mirror
	} else if len(rs) == 1 {
		m, outcome := s.check(ctx, rs[0])
		return []checked{{m, outcome}}
	}
	from, to := rs[0].Meeting.Start, rs[0].Meeting.Start
	for _, r := range rs[1:] {
		from, to = earlier(from, r.Meeting.Start), later(to, r.Meeting.Start)
	}
	read, cancel := context.WithTimeout(ctx, s.opts.CheckTimeout)
	meetings, err := list(read, rs[0].Subscription, from.Add(-time.Millisecond), to)
	cancel()
	if err != nil {
		s.log.Debug("could not confirm meetings before their reminders; sending on the last sweep's reading",
			"subscription", rs[0].Subscription.ID, "reminders", len(rs), "err", err)
		for i, r := range rs {
			out[i] = checked{r.Meeting, meetingbot.CheckUnknown}
		}
		return out
	}
	byID := make(map[string]meetingbot.Meeting, len(meetings))
	for _, m := range meetings {
		byID[m.ID] = m
	}
	for i, r := range rs {
		if m, ok := byID[r.Meeting.ID]; ok && m.Start.Equal(r.Meeting.Start) {
			out[i] = checked{m, meetingbot.CheckConfirmed}
			continue
		}
		m, outcome := s.check(ctx, r)
		out[i] = checked{m, outcome}
	}
	return out
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

// stillWanted turns a confirmed check of r's meeting into CheckChanged when
// r's offset is no longer among the meeting's reminders in its
// subscription: a popup reminder changed or removed in Google Calendar
// since the sweep (the changed one is planned anew by the sweep, never sent
// at both times), or a rule that now skips the meeting (its answer
// changed to "maybe", its link removed). A read that could not tell the
// meeting's own reminders keeps the sweep's.
func stillWanted(r meetingbot.Reminder, c checked) checked {
	if c.outcome != meetingbot.CheckConfirmed {
		return c
	}
	if c.m.RemindersUnread {
		c.m.Reminders, c.m.RemindersUnread = r.Meeting.Reminders, false
	}
	if !slices.Contains(r.Subscription.OffsetsFor(c.m), r.Offset) {
		c.outcome = meetingbot.CheckChanged
	}
	return c
}
