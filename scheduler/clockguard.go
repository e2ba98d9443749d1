package scheduler

import "time"

// jumpGuard remembers the last trusted reading of both clocks, and a
// forward jump of the wall clock not yet believed.
type jumpGuard struct {
	wall     time.Time     // Now at the last trusted reading
	elapsed  time.Duration // Elapsed then
	jumped   bool
	jumpedAt time.Duration // Elapsed when the jump was first seen
}

// trustClock reports whether the scheduler may act on the wall clock's
// reading now. A wall clock far ahead of the time elapsed since it was
// last read (an hour-fast clock, a bad NTP step) would record every meeting
// of the gap as started and move cursors into the future; nothing is done
// on its word until the clock comes back or has kept its new time for
// JumpConfirm. A step back is left to the cursors, which wait for the clock
// to pass them.
func (s *Scheduler) trustClock(now time.Time) bool {
	el := s.clock.Elapsed()
	s.mu.Lock()
	defer s.mu.Unlock()
	g := &s.guard
	if g.wall.IsZero() {
		g.wall, g.elapsed = now, el
		return true
	}
	expected := g.wall.Add(el - g.elapsed)
	ahead := now.Sub(expected)
	switch {
	case ahead <= s.opts.ClockJump:
		if g.jumped {
			g.jumped = false
			s.log.Info("clock back in line; reminders resume from the last sweep", "now", now)
		}
	case !g.jumped:
		g.jumped, g.jumpedAt = true, el
		s.log.Warn("clock jumped forward: no reminders until it comes back or keeps its new time",
			"now", now, "expected", expected, "ahead", ahead, "confirm_after", s.opts.JumpConfirm)
		return false
	case el-g.jumpedAt < s.opts.JumpConfirm:
		return false
	default:
		g.jumped = false
		s.log.Warn("clock jump believed: it kept its new time; catching up from the last sweep", "now", now, "ahead", ahead)
	}
	g.wall, g.elapsed = now, el
	return true
}

// noteBehind records whether sub's cursor is ahead of the clock, logging
// once when the clock is first seen behind the last sweep of any
// subscription, and nothing more until it has passed them all.
func (s *Scheduler) noteBehind(sub string, now, cursor time.Time, behind bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !behind {
		delete(s.behind, sub)
		return
	}
	if len(s.behind) == 0 {
		s.log.Warn("clock stepped back: no reminders until it passes the last sweep",
			"now", now, "last_sweep", cursor, "subscription", sub)
	}
	s.behind[sub] = true
}
