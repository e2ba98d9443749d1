package snooze

import (
	"context"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Timings of the snoozes' upkeep.
const (
	// followEvery is how often the "at start" snoozes are compared with
	// the mirror's reading of their calendars, besides each change the
	// mirror tells of (Changed).
	followEvery = 10 * time.Minute
	// pruneEvery is how often the timers ended past Retention are pruned.
	pruneEvery = time.Hour
	// Retention is how long an ended timer is kept, for bot audit.
	Retention = 30 * 24 * time.Hour
)

// Pruner drops the timers that ended before an instant; both stores
// provide it.
type Pruner interface {
	PruneTimers(ctx context.Context, before time.Time) (int64, error)
}

// Changed follows the meetings a sync of calendarID wrote to the mirror:
// the "at start" snoozes of a meeting that moved move with it. It fits the
// mirror's hook for each sync's changes.
func (s *Service) Changed(ctx context.Context, calendarID string, ms []meetingbot.Meeting) {
	if _, err := s.Follow(ctx, calendarID, ms); err != nil && ctx.Err() == nil {
		s.log.Warn("snoozes could not follow their meetings' moves; they are compared with the mirror again within "+followEvery.String(),
			"calendar", calendarID, "err", err)
	}
}

// catchUp compares the "at start" snoozes with read, the mirror's reading
// of their calendars: a move a process wrote to the mirror and died before
// following, which no later sync tells of again.
func (s *Service) catchUp(ctx context.Context, read Reading) {
	n, err := s.FollowAll(ctx, read)
	switch {
	case err != nil && ctx.Err() == nil:
		s.log.Warn("compare the snoozes with the mirror", "err", err)
	case n > 0:
		s.log.Info("snoozes moved with meetings the mirror had seen move", "snoozes", n)
	}
}

// prune drops the timers ended past Retention.
func (s *Service) prune(ctx context.Context, p Pruner) {
	n, err := p.PruneTimers(ctx, s.now().Add(-Retention))
	switch {
	case err != nil && ctx.Err() == nil:
		s.log.Warn("prune ended timers", "err", err)
	case n > 0:
		s.log.Info("pruned ended timers", "rows", n, "older_than", Retention)
	}
}

// Keep is the snoozes' upkeep until ctx ends: it compares the "at start"
// snoozes with read at once and every followEvery, and prunes the timers
// ended past Retention at once and every hour.
func (s *Service) Keep(ctx context.Context, read Reading, p Pruner) {
	follow := time.NewTicker(followEvery)
	defer follow.Stop()
	prune := time.NewTicker(pruneEvery)
	defer prune.Stop()
	s.catchUp(ctx, read)
	s.prune(ctx, p)
	for {
		select {
		case <-ctx.Done():
			return
		case <-follow.C:
			s.catchUp(ctx, read)
		case <-prune.C:
			s.prune(ctx, p)
		}
	}
}
