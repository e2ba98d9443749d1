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
	snooze.Pruner
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

// run fires the snoozes until ctx ends, a send in flight finished and
// recorded, and keeps them (snooze.Service.Keep) reading the mirror's
// stored readings through read.
func (s *snoozes) run(ctx context.Context, wg *sync.WaitGroup, read snooze.Reading) {
	wg.Go(func() { _ = s.engine.Run(ctx) })
	wg.Go(func() { s.service.Keep(ctx, read, s.store) })
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
