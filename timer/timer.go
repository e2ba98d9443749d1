// Package timer fires durable timers (meetingbot.Timer): the waits people
// create in the bot, whose stored row is the truth (docs/design.md,
// "Remind me at start: a durable timer").
//
// An Engine sleeps on its clock until the earliest pending timer of the
// store, takes it under a lease (so that one process of those sharing the
// store fires it), and hands it to the Handler of its kind, which does
// what the timer waits for through the ledger's claim, send and record
// path and says what became of it: done, moved to a new key, or to be
// tried again later. A timer added in this process (Add), or moved there
// before its instant (Rekey), wakes the engine at once when it is earlier
// than the wake it had; one added by another process is seen within
// Options.Poll, for the store is read again that often. After a restart the store still holds every pending timer: one
// whose instant passed while nothing ran fires late, at once.
//
// The package declares what it consumes (Store, Handler); storage and
// storage/postgres provide the Store, package snooze a Handler.
package timer

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

// Store keeps the timers; *sqlite.Store and *postgres.Store provide it.
// Its contract is storetest.RunTimers.
type Store interface {
	// AddTimer stores t pending unless a timer of its key, or a pending
	// one of its group, exists: it then returns that one and false.
	AddTimer(ctx context.Context, t meetingbot.Timer, now time.Time) (meetingbot.Timer, bool, error)
	// NextTimers returns the pending timers due by now that no other
	// live process holds, when the next of the others falls due (zero:
	// none), and how many timers are pending in all.
	NextTimers(ctx context.Context, now time.Time) ([]meetingbot.Timer, time.Time, int, error)
	// TakeTimer takes a due timer for this process for lease, if no
	// other live process holds it.
	TakeTimer(ctx context.Context, key string, now time.Time, lease time.Duration) (meetingbot.Timer, bool, error)
	// FinishTimer, MoveTimer and RetryTimer end or give back a timer this
	// process holds, or return meetingbot.ErrTimerLost.
	FinishTimer(ctx context.Context, t meetingbot.Timer, now time.Time) error
	MoveTimer(ctx context.Context, old, next meetingbot.Timer, now time.Time) error
	RetryTimer(ctx context.Context, t meetingbot.Timer, at time.Time, reason string) error
	// RekeyTimer ends the pending timer key as moved to next and stores
	// next, when key's instant and next try are after now and nobody
	// holds it, and reports whether it did.
	RekeyTimer(ctx context.Context, key string, next meetingbot.Timer, reason string, now time.Time) (bool, error)
}

// Handler fires the timers of one kind.
type Handler interface {
	// Fire does what t waits for; t is this process's, under a lease of
	// Options.Lease from when it was taken. It must be safe to call again
	// for the same timer after a crash anywhere in it: the ledger's claim
	// on t.Key is what makes the message go out once.
	Fire(ctx context.Context, t meetingbot.Timer) Result
}

// Result is what became of a fired timer.
type Result struct {
	// State is TimerDone (Code and Reason say how), TimerMoved (Next is
	// the timer the wait goes on as), or TimerPending: tried again at
	// Retry, Reason saying why.
	State  meetingbot.TimerState
	Code   meetingbot.ReasonCode
	Reason string
	Next   meetingbot.Timer
	Retry  time.Time
}

// Observer is told what the engine does, for metrics. Its methods are
// called from several goroutines at once.
type Observer interface {
	// TimerFired is called with each timer ended (done, moved) as it
	// was recorded.
	TimerFired(t meetingbot.Timer)
	// TimersPending is called after each pass's read of the store with
	// the number of timers pending in it.
	TimersPending(n int)
}

// Options tune an Engine; the zero value of each field takes its default.
type Options struct {
	// Clock tells the time and runs the engine's one timer; clock.New()
	// by default. Tests pass a *clock.Fake.
	Clock clock.Clock
	// Lease is how long a timer taken is this process's where its
	// liveness cannot be told; 2 minutes by default. It must outlast a
	// fire: a check of the calendar and a send.
	Lease time.Duration
	// Poll is the longest the engine sleeps without reading the store:
	// how soon it sees a timer another process added, or one a dead
	// process held; 30 seconds by default.
	Poll time.Duration
	// ShutdownGrace is how long a fire in flight when Run's context ends
	// may go on to finish and be recorded; 5 seconds by default.
	ShutdownGrace time.Duration
	// MaxFiring bounds the fires in flight; 16 by default.
	MaxFiring int
	// Logger receives the logs; discarded by default.
	Logger *slog.Logger
	// Observer, if set, is told of timers ended and pending.
	Observer Observer
}

// Engine fires durable timers. Create it with New; run it with Run.
type Engine struct {
	store    Store
	handlers map[string]Handler
	opts     Options
	clock    clock.Clock
	log      *slog.Logger
	fires    chan struct{} // one token per fire in flight

	mu       sync.Mutex
	wake     clock.Timer
	wakeAt   time.Time // on the wall clock, when wake fires; zero during a pass
	kick     chan struct{}
	inflight map[string]bool
	work     sync.WaitGroup
}

// New returns an Engine over store firing each kind of timer with its
// handler.
func New(store Store, handlers map[string]Handler, opts Options) (*Engine, error) {
	if store == nil || len(handlers) == 0 {
		return nil, errors.New("timer: a store and at least one handler are required")
	}
	if opts.Clock == nil {
		opts.Clock = clock.New()
	}
	opts.Lease = cmp.Or(opts.Lease, 2*time.Minute)
	opts.Poll = cmp.Or(opts.Poll, 30*time.Second)
	opts.ShutdownGrace = cmp.Or(opts.ShutdownGrace, 5*time.Second)
	opts.MaxFiring = cmp.Or(opts.MaxFiring, 16)
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{
		store: store, handlers: handlers, opts: opts, clock: opts.Clock, log: log,
		fires: make(chan struct{}, opts.MaxFiring), kick: make(chan struct{}, 1), inflight: map[string]bool{},
	}, nil
}

// Add stores t (see Store.AddTimer) and, when it is new, wakes the
// engine if t falls due before its next wake, or if the engine is in a
// pass, which may have read the store before t was in it. It returns the
// timer stored (t, or the one of its key or group there already) and
// whether it is new.
func (e *Engine) Add(ctx context.Context, t meetingbot.Timer) (meetingbot.Timer, bool, error) {
	got, added, err := e.store.AddTimer(ctx, t, e.clock.Now().UTC())
	if err != nil {
		return got, false, fmt.Errorf("timer: add %s: %w", t.Key, err)
	}
	if added {
		e.wakeFor(got.DueAt)
	}
	return got, added, nil
}

// Rekey moves the pending timer old, whose instant is still ahead and
// which nobody holds, to next (see Store.RekeyTimer), saying why in
// reason, and wakes the engine if next falls due before its next wake:
// what a wait does when what it waits for is seen to move before it comes
// ("at start" of a meeting moved). It reports whether it moved old; false
// when old is due, being fired or ended, for its fire to decide.
func (e *Engine) Rekey(ctx context.Context, old, next meetingbot.Timer, reason string) (bool, error) {
	now := e.clock.Now().UTC()
	moved, err := e.store.RekeyTimer(ctx, old.Key, next, reason, now)
	if err != nil {
		return false, fmt.Errorf("timer: rekey %s: %w", old.Key, err)
	}
	if !moved {
		return false, nil
	}
	due := next.DueAt
	if due.IsZero() {
		due = next.FireAt
	}
	e.wakeFor(due)
	e.log.Debug("timer moved before its instant", "timer", old.Key, "next", next.Key, "fire_at", next.FireAt, "reason", reason)
	old.State, old.Code, old.Reason, old.Next, old.DoneAt = meetingbot.TimerMoved, meetingbot.ReasonMeetingMoved, reason, next.Key, now
	e.observe(old)
	return true, nil
}

// wakeFor wakes the engine for a timer stored due at due, if that is
// before its next wake or the engine is in a pass (see Run).
func (e *Engine) wakeFor(due time.Time) {
	e.mu.Lock()
	earlier := e.wakeAt.IsZero() || due.Before(e.wakeAt)
	e.mu.Unlock()
	if earlier {
		e.Wake()
	}
}

// Wake makes the engine read the store now rather than at its next wake.
func (e *Engine) Wake() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// Run fires timers until ctx ends, then waits for the fires in flight
// (each gets ShutdownGrace after ctx ends to finish and be recorded) and
// returns nil.
func (e *Engine) Run(ctx context.Context) error {
	defer e.work.Wait()
	for {
		// Until this pass has set its wake, an Add (or Rekey) wakes the engine
		// whatever its instant: the pass may have read the store before
		// the timer was added, and a wake set from that reading would
		// miss it (it would be found only at the poll).
		e.mu.Lock()
		e.wakeAt = time.Time{}
		e.mu.Unlock()
		next := e.Tick(ctx)
		wait := e.opts.Poll
		if !next.IsZero() {
			wait = min(wait, next.Sub(e.clock.Now()))
		}
		if wait <= 0 {
			if ctx.Err() != nil {
				return nil
			}
			continue // due while the pass ran
		}
		woke := make(chan struct{})
		e.mu.Lock()
		e.wakeAt = e.clock.Now().Add(wait)
		e.wake = e.clock.AfterFunc(wait, func() { close(woke) })
		e.mu.Unlock()
		select {
		case <-ctx.Done():
			e.wake.Stop()
			return nil
		case <-woke:
		case <-e.kick:
			e.wake.Stop()
		}
	}
}

// Tick is one pass at the clock's now: it starts firing every timer due
// that no other process holds, each in its own goroutine, and returns
// when the next pass is due (zero: only the poll). Tests call it with a
// fake clock; Wait waits for the fires it started.
func (e *Engine) Tick(ctx context.Context) time.Time {
	now := e.clock.Now().UTC()
	due, next, pending, err := e.store.NextTimers(ctx, now)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Error("read the timers due; reading again at the next wake", "err", err)
		}
		return time.Time{}
	}
	if e.opts.Observer != nil {
		e.opts.Observer.TimersPending(pending)
	}
	for _, t := range due {
		if ctx.Err() != nil || !e.begin(t.Key) {
			continue
		}
		select {
		case e.fires <- struct{}{}:
		case <-ctx.Done():
			e.end(t.Key)
			continue
		}
		e.work.Go(func() {
			defer func() { <-e.fires }()
			defer e.end(t.Key)
			if e.fire(ctx, t.Key) {
				e.Wake() // a move or a retry may be due at once
			}
		})
	}
	return next
}

// Wait waits for the fires in flight.
func (e *Engine) Wait() { e.work.Wait() }

func (e *Engine) begin(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.inflight[key] {
		return false
	}
	e.inflight[key] = true
	return true
}

func (e *Engine) end(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.inflight, key)
}

// fire takes the timer key and hands it to its handler, and records what
// became of it. It reports whether a timer may be due at once after it
// (moved, or retried).
func (e *Engine) fire(parent context.Context, key string) bool {
	// The fire outlives a stop by ShutdownGrace, so that what Slack took
	// is recorded.
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	defer cancel()
	defer context.AfterFunc(parent, func() {
		t := time.AfterFunc(e.opts.ShutdownGrace, cancel)
		context.AfterFunc(ctx, func() { t.Stop() })
	})()
	log := e.log.With("timer", key)
	t, ok, err := e.store.TakeTimer(ctx, key, e.clock.Now().UTC(), e.opts.Lease)
	if err != nil || !ok {
		if err != nil {
			log.Warn("timer not taken; trying again at the next wake", "err", err)
		}
		return false
	}
	h := e.handlers[t.Kind]
	if h == nil {
		t.State, t.Code, t.Reason = meetingbot.TimerDone, meetingbot.ReasonPermanent, "no handler for timers of kind "+t.Kind
		log.Error("timer of an unknown kind ended", "kind", t.Kind)
		e.finish(ctx, log, t)
		return false
	}
	res := h.Fire(ctx, t)
	now := e.clock.Now().UTC()
	switch res.State {
	case meetingbot.TimerMoved:
		t.State, t.Code, t.Reason, t.Next = meetingbot.TimerMoved, meetingbot.ReasonMeetingMoved, res.Reason, res.Next.Key
		if err := e.store.MoveTimer(ctx, t, res.Next, now); err != nil {
			log.Error("record a timer moved", "next", res.Next.Key, "err", err)
			return false
		}
		t.DoneAt = now
		log.Info("timer moved with its meeting", "next", res.Next.Key, "fire_at", res.Next.FireAt)
		e.observe(t)
		return true
	case meetingbot.TimerPending:
		if err := e.store.RetryTimer(ctx, t, res.Retry, res.Reason); err != nil {
			log.Error("give a timer back for a retry", "err", err)
		}
		return true
	}
	t.State, t.Code, t.Reason = meetingbot.TimerDone, res.Code, res.Reason
	e.finish(ctx, log, t)
	return false
}

// finish records t's end and tells the observer.
func (e *Engine) finish(ctx context.Context, log *slog.Logger, t meetingbot.Timer) {
	now := e.clock.Now().UTC()
	if err := e.store.FinishTimer(ctx, t, now); err != nil {
		log.Error("record a timer's end", "code", t.Code, "err", err)
		return
	}
	t.DoneAt = now
	e.observe(t)
}

func (e *Engine) observe(t meetingbot.Timer) {
	if e.opts.Observer != nil {
		e.opts.Observer.TimerFired(t)
	}
}
