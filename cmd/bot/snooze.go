package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/monitor"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/snooze"
	"github.com/meetingbot/meetingbot/storage/postgres"
	"github.com/meetingbot/meetingbot/storage/sqlite"
	"github.com/meetingbot/meetingbot/timer"
)

// The adapters provide what the timers and snoozes consume.
var (
	_ timer.Store     = (*sqlite.Store)(nil)
	_ timer.Store     = (*postgres.Store)(nil)
	_ snooze.Store    = (*sqlite.Store)(nil)
	_ snooze.Store    = (*postgres.Store)(nil)
	_ snooze.Notifier = (*notify.Slack)(nil)
	_ snooze.Ledger   = (*sqlite.Store)(nil)
	_ timer.Observer  = (*monitor.Monitor)(nil)
	_ snooze.Timers   = (*timer.Engine)(nil)
	_ snoozeStore     = (*sqlite.Store)(nil)
	_ snoozeStore     = (*postgres.Store)(nil)
	_ snooze.Source   = (*lateSource)(nil)
)

// snoozeStore is what the snoozes keep in the bot's store: the timers,
// the ledger's claims, and the subscriptions made in Slack.
type snoozeStore interface {
	timer.Store
	snooze.Store
	snooze.Ledger
	SlackSubscription(ctx context.Context, id string) (meetingbot.SlackSubscription, bool, error)
	PruneTimers(ctx context.Context, before time.Time) (int64, error)
	CalendarSync(ctx context.Context, calendarID string) (meetingbot.CalendarSync, bool, error)
	Mirrored(ctx context.Context, calendarID string, from, to time.Time) ([]meetingbot.Meeting, error)
}

// snoozes are "Remind me at start" and "In 5 min" on reminders (package
// snooze) over the durable timers (package timer), on with self-service,
// which answers the clicks.
type snoozes struct {
	engine  *timer.Engine
	service *snooze.Service
	source  *lateSource
	store   snoozeStore
	fixed   []meetingbot.Subscription // CALENDARS
	log     *slog.Logger
}

// timerRetention is how long an ended timer is kept, for bot audit.
const timerRetention = 30 * 24 * time.Hour

// newSnoozes builds the snoozes for cfg, or returns nil when self-service
// is off. The meeting a snooze waits for is read through the mirror, set
// once it is built (setSource).
func newSnoozes(cfg config.Config, st snoozeStore, slack *notify.Slack, mon *monitor.Monitor, log *slog.Logger) (*snoozes, error) {
	if !cfg.SelfService() {
		return nil, nil
	}
	s := &snoozes{source: &lateSource{}, store: st, fixed: cfg.Subscriptions, log: log}
	h, err := snooze.NewHandler(s.source, slack, st, snooze.Options{Lease: claimLease(cfg), Logger: log})
	if err != nil {
		return nil, err
	}
	s.engine, err = timer.New(st, map[string]timer.Handler{meetingbot.TimerKindSnooze: h}, timer.Options{
		// A timer another replica added, or one a dead replica held, is
		// seen within a tick.
		Poll:     cfg.TickInterval,
		Lease:    claimLease(cfg),
		Logger:   log,
		Observer: mon,
	})
	if err != nil {
		return nil, err
	}
	s.service = snooze.NewService(s.engine, st, s.subscription, time.Now, log)
	return s, nil
}

// subscription finds a reminder's subscription: one of CALENDARS, or one
// made in Slack.
func (s *snoozes) subscription(ctx context.Context, id string) (meetingbot.Subscription, bool, error) {
	for _, sub := range s.fixed {
		if sub.ID == id {
			return sub, true, nil
		}
	}
	made, ok, err := s.store.SlackSubscription(ctx, id)
	if err != nil || !ok {
		return meetingbot.Subscription{}, false, err
	}
	return made.Subscription(), true, nil
}

// followEvery is how often the "at start" snoozes are compared with the
// mirror, besides each change the mirror tells of (changed).
const followEvery = 10 * time.Minute

// changed follows the meetings a sync of calendarID wrote to the mirror:
// the "at start" snoozes of a meeting that moved move with it. It is the
// mirror's Options.Changed.
func (s *snoozes) changed(ctx context.Context, calendarID string, ms []meetingbot.Meeting) {
	if _, err := s.service.Follow(ctx, calendarID, ms); err != nil && ctx.Err() == nil {
		s.log.Warn("snoozes could not follow their meetings' moves; they are compared with the mirror again within "+followEvery.String(),
			"calendar", calendarID, "err", err)
	}
}

// catchUp compares the "at start" snoozes with the mirror's reading of
// their calendars: a move a process wrote to the mirror and died before
// following, which no later sync tells of again.
func (s *snoozes) catchUp(ctx context.Context) {
	n, err := s.service.FollowAll(ctx, func(ctx context.Context, calendarID string) ([]meetingbot.Meeting, bool, error) {
		st, ok, err := s.store.CalendarSync(ctx, calendarID)
		if err != nil || !ok || st.Token == "" {
			return nil, false, err
		}
		ms, err := s.store.Mirrored(ctx, calendarID, st.From, st.Horizon)
		return ms, err == nil, err
	})
	switch {
	case err != nil && ctx.Err() == nil:
		s.log.Warn("compare the snoozes with the mirror", "err", err)
	case n > 0:
		s.log.Info("snoozes moved with meetings the mirror had seen move", "snoozes", n)
	}
}

// run fires the snoozes until ctx ends, a send in flight finished and
// recorded; compares the "at start" snoozes with the mirror at once and
// every followEvery; and prunes the timers ended past the retention every
// hour.
func (s *snoozes) run(ctx context.Context, wg *sync.WaitGroup) {
	wg.Go(func() { _ = s.engine.Run(ctx) })
	wg.Go(func() {
		for {
			s.catchUp(ctx)
			select {
			case <-ctx.Done():
				return
			case <-time.After(followEvery):
			}
		}
	})
	wg.Go(func() {
		for {
			n, err := s.store.PruneTimers(ctx, time.Now().Add(-timerRetention))
			switch {
			case err != nil && ctx.Err() == nil:
				s.log.Warn("prune ended timers", "err", err)
			case n > 0:
				s.log.Info("pruned ended timers", "rows", n, "older_than", timerRetention)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Hour):
			}
		}
	})
}

// lateSource is the snoozes' Source, the mirror, which is built after
// self-service (that needs the snoozes); until it is set a check cannot
// answer, and a snooze goes out on what its reminder showed.
type lateSource struct {
	mu  sync.Mutex
	src snooze.Source
}

func (l *lateSource) set(src snooze.Source) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.src = src
}

func (l *lateSource) get() (snooze.Source, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.src == nil {
		return nil, errNoSourceYet
	}
	return l.src, nil
}

func (l *lateSource) Meetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
	src, err := l.get()
	if err != nil {
		return nil, err
	}
	return src.Meetings(ctx, sub, from, to)
}

func (l *lateSource) Meeting(ctx context.Context, sub meetingbot.Subscription, id string) (meetingbot.Meeting, error) {
	src, err := l.get()
	if err != nil {
		return meetingbot.Meeting{}, err
	}
	return src.Meeting(ctx, sub, id)
}

var errNoSourceYet = errors.New("the calendar mirror is not built yet")
