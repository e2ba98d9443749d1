package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/meetingbot/meetingbot"
)

// sweepAt sweeps sub at instant now, unless a sweep of it is in flight: it
// reads the calendar, sends what is due and unsent, settles the sends a
// crash interrupted, plans timers for what falls due before the next
// sweep, and notes the cursor's move when every due trigger is settled. It
// returns an error only when the ledger cannot be read.
func (s *Scheduler) sweepAt(ctx context.Context, sub meetingbot.Subscription, now time.Time) error {
	if !s.beginSweep(sub.ID) {
		return nil
	}
	defer func() {
		if s.endSweep(sub.ID) && s.enter() {
			go func() {
				defer s.wg.Done()
				s.sweepOne(ctx, sub)
			}()
		}
	}()
	select {
	case s.sweeps <- struct{}{}:
		defer func() { <-s.sweeps }()
	case <-ctx.Done():
		return nil // stopping: nothing was read
	}
	start := time.Now()
	c, hasCursor, err := s.cursor(ctx, sub.ID)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopping: nothing was read, nothing is wrong
		}
		return err
	}
	if hasCursor && !now.After(c) {
		// Swept twice at one instant, or the clock stepped back: nothing
		// can have become due since the cursor.
		s.noteBehind(sub.ID, now, c, now.Before(c))
		return nil
	}
	s.noteBehind(sub.ID, now, c, false)
	orphans, err := s.ledger.Orphans(ctx, sub.ID, now)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if !hasCursor {
		c = now
	}
	err = s.sweep(ctx, sub, c, now, orphans)
	switch {
	case err == nil:
		s.advance(ctx, sub.ID, now)
	case ctx.Err() != nil, errors.Is(err, context.Canceled):
		return nil // stopping: the next process sweeps again, nothing to report
	}
	s.report(sub, now, time.Since(start), err)
	return nil
}

// beginSweep marks sub as being swept and reports whether it was free;
// endSweep frees it and reports whether SweepCalendar asked for another
// sweep meanwhile.
func (s *Scheduler) beginSweep(sub string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sweeping[sub] {
		return false
	}
	s.sweeping[sub] = true
	return true
}

func (s *Scheduler) endSweep(sub string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sweeping, sub)
	again := s.again[sub]
	delete(s.again, sub)
	return again
}

// SweepCalendar sweeps at once the subscriptions of calendarID that this
// process sweeps, as its last round listed them, each in its own
// goroutine; one being swept is swept again once that sweep ends, since it
// may have read the calendar before the change. A calendar change Google
// pushed is so planned (its timer armed, moved or dropped) within moments,
// not at the subscription's next sweep. It returns without waiting.
func (s *Scheduler) SweepCalendar(ctx context.Context, calendarID string) {
	s.mu.Lock()
	lists := [][]meetingbot.Subscription{s.mine}
	if !s.shared {
		// Read in place: a copy of every subscription for each
		// notification was most of what 10,000 of them allocated.
		lists = [][]meetingbot.Subscription{s.subs, s.extra}
	}
	var now []meetingbot.Subscription
	seen := map[string]bool{}
	for _, list := range lists {
		for _, sub := range list {
			if sub.Reading() != calendarID || seen[sub.ID] {
				continue
			}
			seen[sub.ID] = true // those given to New come first and win
			if s.sweeping[sub.ID] {
				s.again[sub.ID] = true
				continue
			}
			now = append(now, sub)
		}
	}
	s.mu.Unlock()
	for _, sub := range now {
		if s.enter() {
			go func() {
				defer s.wg.Done()
				s.sweepOne(ctx, sub)
			}()
		}
	}
}

// sweep does one sweep's work for sub, whose cursor is c, and returns nil
// when the cursor may move to now.
//
// A sweep over a stale reading (a *meetingbot.StaleReading beside the
// meetings: the calendar did not answer, or the Calendar quota had no
// place for the read in time) plans and sends from what the reading
// holds: a meeting the bot knew of gets its reminder, at its trigger, as
// if the read had succeeded. What only a fresh reading can tell waits for
// one: no reminder is recorded as skipped because its meeting started (it
// may have moved), no interrupted claim as no longer due, no sent
// reminder is edited, and the cursor stays, so that the first fresh
// sweep covers every trigger since and settles each (sent, or skipped
// because its meeting started) with what the calendar says then. The
// sweep reports the stale reading as its error: logged when it starts
// and changes, and counted.
func (s *Scheduler) sweep(ctx context.Context, sub meetingbot.Subscription, c, now time.Time, orphans []meetingbot.Entry) error {
	// Read every meeting that can own a due trigger not yet settled (its
	// earliest trigger is after the cursor, or it has not started: a 0
	// offset may go out up to StartGrace after the start), and every one
	// whose trigger falls before the next sweep, to plan it.
	notStarted := now
	if sub.MinOffset() == 0 {
		notStarted = now.Add(-meetingbot.StartGrace)
	}
	from := c.Add(sub.MinOffset())
	if from.After(notStarted) {
		from = notStarted
	}
	from = later(from, now.Add(-s.opts.MaxCatchUp))
	horizon := s.horizon()
	to := now.Add(horizon + sub.MaxOffset())

	meetings, err := s.read(ctx, sub, from, to)
	// An older reading, when the calendar cannot answer now: what it
	// knew is the plan until a newer reading comes (see staleSweep).
	var stale *meetingbot.StaleReading
	if err != nil && !errors.As(err, &stale) {
		return fmt.Errorf("read calendar %s: %w", sub.CalendarID, err)
	}
	listed := meetings // muted series too: a reminder sent before the mute is still followed
	if len(sub.Muted) > 0 {
		meetings = slices.DeleteFunc(slices.Clone(meetings), sub.Mutes)
	}
	if stale == nil {
		s.notePopups(sub, meetings)
	}
	due := dueReminders(sub, meetings, from, c, now, s.opts.Interval+meetingbot.LateSlack)
	if stale != nil {
		due = slices.DeleteFunc(due, func(r meetingbot.Reminder) bool { return started(r, now) })
	}
	s.plan(ctx, sub, meetings, now, horizon)
	settled := true
	if len(due) > 0 {
		settled = s.deliver(ctx, sub, from, due)
	}
	if stale != nil {
		return fmt.Errorf("read calendar %s: %w", sub.CalendarID, stale)
	}
	dueKeys := make(map[string]bool, len(due))
	for _, r := range due {
		dueKeys[r.Key] = true
	}
	for _, e := range orphans {
		if !dueKeys[e.Key] {
			s.resolveOrphan(ctx, sub, e)
		}
	}
	s.follow(ctx, sub, listed, from, to, now)
	if !settled {
		return errors.New("some due reminders are not settled yet; retrying next sweep")
	}
	return nil
}

// horizon is how far ahead a sweep plans timers: two intervals, so that a
// sweep delayed by up to a whole interval still finds its timers armed,
// and with posting ahead (Options.Early) that much more, so that a
// reminder may be fired ahead of its trigger.
func (s *Scheduler) horizon() time.Duration { return 2*s.opts.Interval + s.opts.Early }

// read reads sub's meetings in (from, to], one of at most MaxReads reads in
// flight, within ReadTimeout.
func (s *Scheduler) read(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
	select {
	case s.reads <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s.reading(+1)
	defer func() {
		<-s.reads
		s.reading(-1)
	}()
	ctx, cancel := context.WithTimeout(ctx, s.opts.ReadTimeout)
	defer cancel()
	return s.source.Meetings(ctx, sub, from, to)
}

func (s *Scheduler) reading(delta int) {
	s.mu.Lock()
	s.readsNow += delta
	n := s.readsNow
	s.mu.Unlock()
	if s.opts.Observer != nil {
		s.opts.Observer.Reading(n)
	}
}

// dueReminders lists the triggers of meetings that are due at now, oldest
// first. A trigger is late when it is at or before the cursor c (the sweep
// that should have seen it did not: the meeting was created or moved late,
// or the bot was not installed yet) or more than lateAfter before now (the
// bot was down or stalled).
func dueReminders(sub meetingbot.Subscription, meetings []meetingbot.Meeting, from, c, now time.Time, lateAfter time.Duration) []meetingbot.Reminder {
	var due []meetingbot.Reminder
	for _, m := range meetings {
		if !m.Start.After(from) {
			continue // the source promised (from, to]; guard against one that does not
		}
		for _, o := range sub.OffsetsFor(m) {
			at := m.Start.Add(-o)
			if at.After(now) {
				continue
			}
			due = append(due, meetingbot.Reminder{
				Key:          meetingbot.Key(m.KeyID(), o, m.Start),
				Subscription: sub,
				Meeting:      m,
				Offset:       o,
				TriggerAt:    at.UTC(),
				Late:         !at.After(c) || now.Sub(at) > lateAfter,
			})
		}
	}
	sortReminders(due)
	return due
}

// sortReminders orders reminders oldest trigger first, then by key.
func sortReminders(rs []meetingbot.Reminder) {
	sort.Slice(rs, func(i, j int) bool {
		if !rs[i].TriggerAt.Equal(rs[j].TriggerAt) {
			return rs[i].TriggerAt.Before(rs[j].TriggerAt)
		}
		return rs[i].Key < rs[j].Key
	})
}

// deliver settles each due reminder not already in the ledger, oldest first,
// and reports whether all of them are settled. The due reminders are of
// meetings starting after from. The ledger is asked only about the keys
// this process does not know to be settled (see noteSettled); what it
// knows of meetings that start by from, which no sweep lists again, is
// forgotten.
func (s *Scheduler) deliver(ctx context.Context, sub meetingbot.Subscription, from time.Time, due []meetingbot.Reminder) bool {
	s.mu.Lock()
	var keys []string
	for _, r := range due {
		if _, ok := s.settled[sub.ID][r.Key]; !ok {
			keys = append(keys, r.Key)
		}
	}
	s.mu.Unlock()
	var found map[string]meetingbot.Entry
	if len(keys) > 0 {
		var err error
		if found, err = s.ledger.Entries(ctx, sub.ID, keys); err != nil {
			if ctx.Err() == nil {
				s.ledgerFailed(err)
				s.log.Error("read ledger", "subscription", sub.ID, "err", err)
			}
			return false
		}
	}
	s.mu.Lock()
	known := s.settledLocked(sub.ID)
	for key, e := range found {
		if e.Final() {
			known[key] = e.Start
		}
	}
	for key, start := range known {
		if !start.After(from) {
			delete(known, key)
		}
	}
	settled := make(map[string]bool, len(due))
	for _, r := range due {
		_, settled[r.Key] = known[r.Key]
	}
	s.mu.Unlock()
	all := true
	var group []meetingbot.Reminder // due at one instant
	flush := func() {
		if len(group) > 0 && ctx.Err() == nil {
			all = s.remindAll(ctx, s.settleChanged(ctx, group)) && all
		}
		group = group[:0]
	}
	for _, r := range due {
		if settled[r.Key] {
			continue
		}
		if len(group) > 0 && !group[0].TriggerAt.Equal(r.TriggerAt) {
			flush()
		}
		group = append(group, r)
	}
	flush()
	if ctx.Err() != nil {
		return false // shutting down: claim nothing new
	}
	return all
}

func entryOf(r meetingbot.Reminder) meetingbot.Entry {
	return meetingbot.Entry{
		Subscription: r.Subscription.ID,
		Kind:         r.Subscription.Kind,
		Key:          r.Key,
		EventID:      r.Meeting.ID,
		Offset:       r.Offset,
		Start:        r.Meeting.Start.UTC(),
		TriggerAt:    r.TriggerAt.UTC(),
		Late:         r.Late,
	}
}

// started reports whether r's meeting is too far along for a reminder.
func started(r meetingbot.Reminder, now time.Time) bool {
	if r.Offset == 0 {
		return !now.Before(r.Meeting.Start.Add(meetingbot.StartGrace))
	}
	return !now.Before(r.Meeting.Start)
}

// report logs a subscription's failure once, when it starts or changes, and
// its recovery; and tells the observer every time.
func (s *Scheduler) report(sub meetingbot.Subscription, now time.Time, took time.Duration, err error) {
	msg := ""
	var stale *meetingbot.StaleReading
	switch {
	case errors.As(err, &stale):
		// One line an outage, not one per retry's wording.
		msg = "stale " + string(stale.Why) + " " + stale.ReadAt.String()
	case err != nil:
		msg = err.Error()
	}
	s.mu.Lock()
	last := s.lastErr[sub.ID]
	s.lastErr[sub.ID] = msg
	s.mu.Unlock()
	switch {
	case stale != nil && msg != last:
		s.log.Warn("calendar not read afresh: reminding from its last reading until it answers", "subscription", sub.ID,
			"read_at", stale.ReadAt, "why", stale.Why, "err", stale.Err)
	case err != nil && msg != last && meetingbot.IsPermanent(err):
		s.log.Error("subscription needs attention", "subscription", sub.ID, "err", err)
	case err != nil && msg != last:
		s.log.Warn("subscription will retry", "subscription", sub.ID, "err", err)
	case err == nil && last != "":
		s.log.Info("subscription recovered", "subscription", sub.ID)
	}
	if s.opts.Observer != nil {
		s.opts.Observer.Swept(sub, now, took, err)
	}
}
