// Package agenda sends the daily agenda: a DM at the time each person
// chose (/meetingbot agenda HH:MM) in their Slack time zone, listing that
// local day's meetings, exactly once per local day.
//
// It is a wall-clock schedule, unlike the reminders' offsets from a
// meeting's start, so it is an engine of its own beside the scheduler,
// sharing the ledger's claims. Each pass (Tick, every interval of Run)
// reads who has an agenda and their zone from Slack, computes for each
// the instants of the local days around now with time.Date in the zone
// (never by adding 24 hours), and arms a timer on the clock for an agenda
// due before the next pass, so that it goes out at HH:MM and not at the
// next pass. An agenda due and unsettled (the bot was down or stalled at
// HH:MM) goes out late until local noon, and is skipped after, with the
// reason recorded. The key, agenda:<user>:<local date>, is claimed and
// recorded in the ledger as a reminder's is: through restarts, crashes and
// several processes on one database it goes out once.
//
// A day without meetings sends nothing and records why
// (meetingbot.ReasonNoMeetings).
package agenda

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
)

// maxConcurrent bounds the people a pass handles at once: after a
// downtime many agendas are due together, each a calendar read and a
// post to its own DM.
const maxConcurrent = 8

// Options configure an Engine; the zero value takes the defaults.
type Options struct {
	// Interval is how often Run plans; meetingbot.DefaultTickInterval by
	// default. Timers cover the agendas due before the next pass.
	Interval time.Duration
	// Lease bounds a claim of a process that cannot be told alive or
	// dead; 2 minutes by default.
	Lease time.Duration
	// SendTimeout bounds one agenda's calendar read and post; 1 minute by
	// default.
	SendTimeout time.Duration
	// ShutdownGrace is how long a send in flight when Run's context ends
	// may go on to finish and be recorded; 5 seconds by default.
	ShutdownGrace time.Duration
	// Clock tells the time and runs the timers; clock.New() by default.
	Clock clock.Clock
	// Logger receives the logs; discarded by default.
	Logger *slog.Logger
	// Observer is told each outcome recorded; optional.
	Observer Observer
}

// Engine plans and sends daily agendas. Create it with New.
type Engine struct {
	settings Settings
	people   People
	cal      Calendar
	notifier Notifier
	ledger   Ledger
	opts     Options
	clock    clock.Clock
	log      *slog.Logger

	mu       sync.Mutex
	timers   map[string]*armed // by user
	inFlight map[string]bool   // keys being sent by this process
	stopped  bool
	work     sync.WaitGroup
}

// armed is an agenda planned on a timer.
type armed struct {
	p     plan
	timer clock.Timer
}

// New returns an Engine; every dependency is required.
func New(settings Settings, people People, cal Calendar, notifier Notifier, ledger Ledger, opts Options) (*Engine, error) {
	if settings == nil || people == nil || cal == nil || notifier == nil || ledger == nil {
		return nil, errors.New("agenda: settings, people, calendar, notifier and ledger are required")
	}
	opts.Interval = cmp.Or(opts.Interval, meetingbot.DefaultTickInterval)
	opts.Lease = cmp.Or(opts.Lease, 2*time.Minute)
	opts.SendTimeout = cmp.Or(opts.SendTimeout, time.Minute)
	opts.ShutdownGrace = cmp.Or(opts.ShutdownGrace, 5*time.Second)
	if opts.Clock == nil {
		opts.Clock = clock.New()
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{
		settings: settings, people: people, cal: cal, notifier: notifier, ledger: ledger,
		opts: opts, clock: opts.Clock, log: log,
		timers: map[string]*armed{}, inFlight: map[string]bool{},
	}, nil
}

// Run plans at once and then every Interval until ctx ends; then it stops
// the timers, lets a send in flight finish (ShutdownGrace at most) and
// returns nil. A failed pass is logged and retried at the next.
func (e *Engine) Run(ctx context.Context) error {
	clock.Every(ctx, e.clock, e.opts.Interval, func() {
		if err := e.Tick(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("agenda pass failed; retrying at the next", "err", err)
		}
	})
	e.stop()
	return nil
}

// stop disarms the timers and waits for the sends in flight.
func (e *Engine) stop() {
	e.mu.Lock()
	e.stopped = true
	for user, a := range e.timers {
		a.timer.Stop()
		delete(e.timers, user)
	}
	e.mu.Unlock()
	e.work.Wait()
}

// Tick is one planning pass at the clock's now: for each person with an
// agenda it sends what is due and unsettled, records as skipped what is
// too late to send, arms a timer for what falls due before the next pass,
// and settles the interrupted sends of agendas no longer planned. It
// returns the first error that kept it from looking at everyone; one
// person's failure does not stop the others.
func (e *Engine) Tick(ctx context.Context) error {
	now := e.clock.Now()
	sets, err := e.settings.SlackAgendas(ctx)
	if err != nil {
		return fmt.Errorf("agenda: list: %w", err)
	}
	planned := map[string]bool{}
	users := map[string]bool{}
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxConcurrent)
	for _, set := range sets {
		users[set.UserID] = true
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			ps, err := e.plans(ctx, set, now)
			if err == nil {
				err = e.pass(ctx, set, ps, now)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, p := range ps {
				planned[p.key()] = true
			}
			if err != nil {
				e.log.Warn("agenda pass of a person failed; retrying at the next", "user", set.UserID, "err", err)
				firstErr = cmp.Or(firstErr, err)
			}
		})
	}
	wg.Wait()
	e.dropTimers(users)
	if err := e.settleOrphans(ctx, planned, now); err != nil {
		firstErr = cmp.Or(firstErr, err)
	}
	return firstErr
}

// plans returns set's plans of the local days around now, in the zone
// Slack gives now (the stored one if Slack cannot be asked).
func (e *Engine) plans(ctx context.Context, set meetingbot.SlackSettings, now time.Time) ([]plan, error) {
	tz, email := set.TZ, ""
	if p, err := e.people.Person(ctx, set.UserID); err != nil {
		e.log.Debug("Slack profile not read; planning in the stored zone", "user", set.UserID, "err", err)
	} else {
		tz, email = cmp.Or(p.TZ, tz), p.Email
	}
	return plansAround(set.UserID, set.Agenda, email, zoneOf(tz), now)
}

// pass handles one person's plans at now.
func (e *Engine) pass(ctx context.Context, set meetingbot.SlackSettings, ps []plan, now time.Time) error {
	keys := make([]string, len(ps))
	for i, p := range ps {
		keys[i] = p.key()
	}
	have, err := e.ledger.Entries(ctx, meetingbot.AgendaSubscription(set.UserID), keys)
	if err != nil {
		return err
	}
	var next *plan
	var due []plan
	for i, p := range ps {
		prev, known := have[p.key()]
		switch {
		case known && prev.Final():
		case known && !p.at.After(now):
			due = append(due, p) // a retry, or an interrupted send
		case p.at.After(now):
			if next == nil && !p.at.After(now.Add(2*e.opts.Interval)) {
				next = &ps[i]
			}
		case p.at.Before(set.UpdatedAt):
			// Set after its time that day: the first agenda is the
			// next day's.
		case !now.Before(p.deadline) && i != 1:
			// Another day's, too late: nothing was claimed, nothing is
			// recorded (the audit counts it missing).
		default:
			due = append(due, p) // sent, or recorded as too late
		}
	}
	e.arm(ctx, set.UserID, next, now)
	for _, p := range due {
		e.deliver(ctx, p, now)
	}
	return nil
}

// arm keeps one timer per person, for p (nil: none).
func (e *Engine) arm(ctx context.Context, user string, p *plan, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return
	}
	if a := e.timers[user]; a != nil {
		if p != nil && a.p.key() == p.key() && a.p.at.Equal(p.at) {
			a.p = *p
			return
		}
		a.timer.Stop()
		delete(e.timers, user)
	}
	if p == nil {
		return
	}
	a := &armed{p: *p}
	a.timer = e.clock.AfterFunc(p.at.Sub(now), func() { e.fire(ctx, user, a) })
	e.timers[user] = a
}

// fire sends the agenda of a timer at its instant.
func (e *Engine) fire(ctx context.Context, user string, a *armed) {
	e.mu.Lock()
	if e.stopped || e.timers[user] != a {
		e.mu.Unlock()
		return
	}
	delete(e.timers, user)
	p := a.p
	e.mu.Unlock()
	e.deliver(ctx, p, e.clock.Now())
}

// dropTimers stops the timers of people who no longer have an agenda.
func (e *Engine) dropTimers(users map[string]bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for user, a := range e.timers {
		if !users[user] {
			a.timer.Stop()
			delete(e.timers, user)
		}
	}
}

// Armed returns the number of agendas on a timer.
func (e *Engine) Armed() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.timers)
}
