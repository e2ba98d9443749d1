package snooze

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Follow moves the pending "at start" snoozes of the meetings of
// calendarID listed in ms to their meeting's start, where it is not the
// instant they wait for: the meeting moved, and "at start" follows the
// calendar (docs/design.md, "Remind me at start: a durable timer"). Each
// becomes a timer at the new start under a new key, which the Home tab
// lists and which fires at that start, earlier or later. "In 5 min" goes
// on as set (its DM says the new time), and a snooze whose instant has
// come is left to its fire, which checks the meeting anyway. ms are the
// meetings of the calendar as the bot just learned them (the mirror's
// sync, a push, the sweep's read); a meeting missing from ms is not
// looked at. It returns how many snoozes moved; a snooze that cannot be
// moved (the store failing) is in the error, and the others move.
func (s *Service) Follow(ctx context.Context, calendarID string, ms []meetingbot.Meeting) (int, error) {
	if len(ms) == 0 {
		return 0, nil
	}
	pending, err := s.store.PendingTimers(ctx, "")
	if err != nil {
		return 0, fmt.Errorf("snooze: follow the meetings of %s: %w", calendarID, err)
	}
	return s.follow(ctx, calendarID, ms, pending)
}

// FollowAll is Follow for every calendar that has "at start" snoozes
// ahead, with the meetings read reads of it: a catch-up for a change that
// the bot wrote to its reading of the calendar and did not follow (the
// process died in between), which the next sync, finding nothing new,
// would not tell again. It returns how many snoozes moved; a calendar
// that cannot be read is in the error, and the others are followed.
func (s *Service) FollowAll(ctx context.Context, read Reading) (int, error) {
	pending, err := s.store.PendingTimers(ctx, "")
	if err != nil {
		return 0, fmt.Errorf("snooze: follow the meetings: %w", err)
	}
	now := s.now()
	var calendars []string
	seen := map[string]bool{}
	for _, t := range pending {
		if sn, ok := meetingbot.ParseSnooze(t); ok && sn.Mode == meetingbot.SnoozeAtStart && t.FireAt.After(now) && !seen[sn.Calendar] {
			seen[sn.Calendar] = true
			calendars = append(calendars, sn.Calendar)
		}
	}
	n := 0
	var errs []error
	for _, cal := range calendars {
		ms, ok, err := read(ctx, cal)
		if err != nil {
			errs = append(errs, fmt.Errorf("snooze: follow the meetings of %s: %w", cal, err))
			continue
		}
		if !ok {
			continue
		}
		moved, err := s.follow(ctx, cal, ms, pending)
		n += moved
		if err != nil {
			errs = append(errs, err)
		}
	}
	return n, errors.Join(errs...)
}

// follow is Follow over the timers pending.
func (s *Service) follow(ctx context.Context, calendarID string, ms []meetingbot.Meeting, pending []meetingbot.Timer) (int, error) {
	byID := map[string]meetingbot.Meeting{}
	for _, m := range ms {
		byID[m.ID] = m
	}
	now := s.now()
	n := 0
	var errs []error
	for _, t := range pending {
		sn, ok := meetingbot.ParseSnooze(t)
		if !ok || sn.Mode != meetingbot.SnoozeAtStart || sn.Calendar != calendarID || !t.FireAt.After(now) {
			continue
		}
		m, ok := byID[sn.Meeting.ID]
		start := m.Start.UTC().Truncate(time.Second)
		if !ok || start.Equal(t.FireAt) {
			continue
		}
		next := sn
		next.Meeting = shownAs(sn.Meeting, m)
		why := "the meeting moved to " + start.Format(time.RFC3339)
		moved, err := s.timers.Rekey(ctx, t, next.Timer(start), why)
		if err != nil {
			errs = append(errs, fmt.Errorf("snooze: follow %s: %w", t.Key, err)) // the others still follow
			continue
		}
		if moved {
			n++
			s.log.Info("the meeting moved before its snooze; the snooze follows its start", "user", sn.User, "timer", t.Key, "new_start", start)
		}
	}
	return n, errors.Join(errs...)
}
