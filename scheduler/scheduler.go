// Package scheduler is the sweep at the heart of the bot: on every tick it asks
// which reminders became due since it last looked, re-reading the calendar each
// time, and sends each due reminder exactly once, recording it in a ledger.
//
// The package declares what it consumes (consumes.go, scheduler.go): a Source
// of meetings, a Notifier that delivers one reminder, and a Ledger that keeps
// cursors and outcomes. It speaks the root package's words and imports no
// adapter; the calendar, notify and storage packages provide what it consumes,
// and cmd/bot wires them.
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Ledger is the state the scheduler keeps between ticks; *storage.Store
// provides it.
// Claims belong to the Ledger that made them: one Ledger per process.
type Ledger interface {
	Cursors(ctx context.Context) (map[string]time.Time, error)
	AdvanceCursors(ctx context.Context, cursors map[string]time.Time) error
	Entries(ctx context.Context, subscription string, keys []string) (map[string]meetingbot.Entry, error)
	// Orphans lists the claims in flight no other live process may finish.
	Orphans(ctx context.Context, now time.Time) ([]meetingbot.Entry, error)
	// Claim takes a key at now until leaseUntil; a live process's claim
	// is never taken.
	Claim(ctx context.Context, e meetingbot.Entry, now, leaseUntil time.Time) (meetingbot.ClaimStatus, meetingbot.Entry, error)
	// Renew extends a claim held; Record ends it with an outcome; Release
	// gives it up unconfirmed, for a lookup before any resend.
	Renew(ctx context.Context, e meetingbot.Entry, leaseUntil time.Time) error
	Record(ctx context.Context, e meetingbot.Entry, now time.Time) error
	Release(ctx context.Context, e meetingbot.Entry, reason string) error
	Prune(ctx context.Context, before time.Time) (int64, error)
}

// Observer is told what the scheduler does, for metrics and health. Its
// methods are called from several goroutines at once.
type Observer interface {
	// Recorded is called for each outcome the scheduler records in the
	// ledger: sent, skipped, failed (permanently or for now).
	Recorded(e meetingbot.Entry)
	// Swept is called once per subscription per tick; err is nil when the
	// subscription's sweep completed and its cursor moved to now.
	Swept(sub meetingbot.Subscription, now time.Time, err error)
	// Ticked is called after each tick with how long it took and the
	// error Tick returns: nil, or the ledger failing to be read or
	// written, which no subscription's Swept reports.
	Ticked(now time.Time, took time.Duration, err error)
}

// Options tune a Scheduler. The zero value of each field picks its default.
type Options struct {
	// Now is the clock; time.Now by default. Tests pin it.
	Now func() time.Time
	// Elapsed reads a clock that never jumps: the time since a fixed
	// origin. Comparing it with Now tells a step of the wall clock from
	// time passing (see ClockJump). By default it is the monotonic clock
	// when Now is time.Now, and Now itself when Now is injected, which
	// sees no jump; tests of jumps inject both.
	Elapsed func() time.Duration
	// ClockJump is how far the wall clock may run ahead of Elapsed between
	// two ticks before the scheduler distrusts it; 1m by default. A tick
	// that sees such a jump does nothing: it records nothing as started
	// and keeps every cursor. The jump is believed once the clock has kept
	// its new time for JumpConfirm (2m by default), or forgotten when the
	// clock comes back.
	ClockJump, JumpConfirm time.Duration
	// Interval is Run's tick period; meetingbot.DefaultTickInterval by
	// default.
	Interval time.Duration
	// MaxCatchUp bounds how far back a sweep reads after a gap; 24h by default.
	MaxCatchUp time.Duration
	// Retention is how long settled ledger rows are kept after their
	// meeting's start; 30 days by default. It must exceed MaxCatchUp.
	Retention time.Duration
	// Lease is how long a claim keeps other processes off a key; 2m by default.
	Lease time.Duration
	// SendTimeout bounds one delivery, retries included; Lease/2 by default,
	// and never more, so a claim outlives the send it guards.
	SendTimeout time.Duration
	// ShutdownGrace is how long a send in flight may go on once the tick's
	// context ends; 5s by default.
	ShutdownGrace time.Duration
	// ReadTimeout bounds one subscription's calendar read, retries
	// included; 1m by default.
	ReadTimeout time.Duration
	// Workers is how many subscriptions are swept at once; 8 by default.
	Workers int
	// Logger receives the scheduler's logs; slog.Default() by default.
	Logger *slog.Logger
	// Observer, if set, is told of outcomes and ticks.
	Observer Observer
}

// Scheduler sweeps subscriptions for due reminders. Create it with New.
type Scheduler struct {
	subs   []meetingbot.Subscription
	source Source
	notify Notifier
	ledger Ledger
	opts   Options
	log    *slog.Logger

	mu          sync.Mutex
	lastErr     map[string]string // per subscription, to report each failure once
	steppedBack bool
	lastPrune   time.Time
	inflight    map[string]bool // subscription|key of the claims this process is working on
	clock       jumpGuard
}

// New returns a Scheduler over subs. It fails if two subscriptions share an
// ID, a subscription has no offsets or a negative one, or the options
// contradict each other.
func New(subs []meetingbot.Subscription, source Source, notifier Notifier, ledger Ledger, opts Options) (*Scheduler, error) {
	if opts.Elapsed == nil {
		if opts.Now == nil {
			origin := time.Now()
			opts.Elapsed = func() time.Duration { return time.Since(origin) }
		} else {
			now, origin := opts.Now, opts.Now()
			opts.Elapsed = func() time.Duration { return now().Sub(origin) }
		}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.ClockJump = orDefault(opts.ClockJump, time.Minute)
	opts.JumpConfirm = orDefault(opts.JumpConfirm, 2*time.Minute)
	opts.Interval = orDefault(opts.Interval, meetingbot.DefaultTickInterval)
	opts.MaxCatchUp = orDefault(opts.MaxCatchUp, 24*time.Hour)
	opts.Retention = orDefault(opts.Retention, 30*24*time.Hour)
	opts.Lease = orDefault(opts.Lease, 2*time.Minute)
	opts.SendTimeout = min(orDefault(opts.SendTimeout, opts.Lease/2), opts.Lease/2)
	opts.ReadTimeout = orDefault(opts.ReadTimeout, time.Minute)
	opts.ShutdownGrace = orDefault(opts.ShutdownGrace, 5*time.Second)
	if opts.Workers <= 0 {
		opts.Workers = 8
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Retention <= opts.MaxCatchUp {
		return nil, fmt.Errorf("scheduler: retention %v must exceed the catch-up span %v, or old reminders could be sent again", opts.Retention, opts.MaxCatchUp)
	}
	seen := map[string]bool{}
	for _, s := range subs {
		if s.ID == "" {
			return nil, errors.New("scheduler: subscription without an ID")
		}
		if seen[s.ID] {
			return nil, fmt.Errorf("scheduler: subscription %q appears twice", s.ID)
		}
		seen[s.ID] = true
		if len(s.Offsets) == 0 {
			return nil, fmt.Errorf("scheduler: subscription %q has no reminder offsets", s.ID)
		}
		for _, o := range s.Offsets {
			if o < 0 {
				return nil, fmt.Errorf("scheduler: subscription %q: negative offset %v", s.ID, o)
			}
		}
	}
	return &Scheduler{
		subs: subs, source: source, notify: notifier, ledger: ledger, opts: opts,
		log: opts.Logger, lastErr: map[string]string{}, inflight: map[string]bool{},
	}, nil
}

// orDefault returns v, or def when v is not positive.
func orDefault(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// Run ticks at once and then every Interval until ctx ends, and returns nil
// then. A send in flight when ctx ends is finished and recorded first.
func (s *Scheduler) Run(ctx context.Context) error {
	t := time.NewTicker(s.opts.Interval)
	defer t.Stop()
	for {
		if err := s.Tick(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("tick failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Tick sweeps every subscription once at the clock's current instant. A
// subscription that fails is logged and retried on the next tick without
// holding up the others; Tick returns an error only when the ledger itself
// cannot be read or written.
func (s *Scheduler) Tick(ctx context.Context) (err error) {
	start := time.Now()
	now := s.opts.Now().UTC()
	if !s.trustClock(now) {
		return nil
	}
	if s.opts.Observer != nil {
		defer func() { s.opts.Observer.Ticked(now, time.Since(start), err) }()
	}
	cursors, err := s.ledger.Cursors(ctx)
	if err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	orphanList, err := s.ledger.Orphans(ctx, now)
	if err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	orphans := map[string][]meetingbot.Entry{}
	for _, e := range orphanList {
		orphans[e.Subscription] = append(orphans[e.Subscription], e)
	}
	s.dropRemoved(ctx, orphans)

	type result struct {
		sub     string
		advance bool
		back    bool
	}
	results := make([]result, len(s.subs))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(s.opts.Workers, len(s.subs)) {
		wg.Go(func() {
			for i := range jobs {
				sub := s.subs[i]
				c, ok := cursors[sub.ID]
				r := s.sweep(ctx, sub, c, ok, now, orphans[sub.ID])
				results[i] = result{sub: sub.ID, advance: r.advance, back: r.back}
			}
		})
	}
	for i := range s.subs {
		jobs <- i
	}
	close(jobs)
	wg.Wait()

	advance := map[string]time.Time{}
	back := 0
	for _, r := range results {
		if r.advance {
			advance[r.sub] = now
		}
		if r.back {
			back++
		}
	}
	s.noteSteppedBack(now, back, cursors)
	// Cursors are written after the sends, in one transaction: a crash before
	// this leaves them behind, and the ledger keeps the next tick from
	// sending twice.
	if err := s.ledger.AdvanceCursors(context.WithoutCancel(ctx), advance); err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	s.prune(ctx, now)
	return nil
}

// jumpGuard remembers the last trusted reading of both clocks, and a
// forward jump of the wall clock not yet believed.
type jumpGuard struct {
	wall     time.Time     // Now at the last trusted tick
	elapsed  time.Duration // Elapsed then
	jumped   bool
	jumpedAt time.Duration // Elapsed when the jump was first seen
}

// trustClock reports whether a tick may act on the wall clock's reading
// now. A wall clock far ahead of the time elapsed since the last tick (an
// hour-fast clock, a bad NTP step) would record every meeting of the gap
// as started and move cursors into the future; such a tick does nothing
// until the clock comes back or has kept its new time for JumpConfirm. A
// step back is left to the cursors, which wait for the clock to pass them.
func (s *Scheduler) trustClock(now time.Time) bool {
	el := s.opts.Elapsed()
	s.mu.Lock()
	defer s.mu.Unlock()
	g := &s.clock
	if g.wall.IsZero() {
		g.wall, g.elapsed = now, el
		return true
	}
	ahead := now.Sub(g.wall.Add(el - g.elapsed))
	switch {
	case ahead <= s.opts.ClockJump:
		if g.jumped {
			g.jumped = false
			s.log.Info("clock back in line; reminders resume from the last sweep", "now", now)
		}
	case !g.jumped:
		g.jumped, g.jumpedAt = true, el
		s.log.Warn("clock jumped forward: no reminders until it comes back or keeps its new time",
			"now", now, "expected", g.wall.Add(el-g.elapsed), "ahead", ahead, "confirm_after", s.opts.JumpConfirm)
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

func (s *Scheduler) noteSteppedBack(now time.Time, n int, cursors map[string]time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n == 0 {
		s.steppedBack = false
		return
	}
	if s.steppedBack {
		return
	}
	s.steppedBack = true
	var ahead time.Time
	for _, c := range cursors {
		ahead = later(ahead, c)
	}
	s.log.Warn("clock stepped back: no reminders until it passes the last sweep",
		"now", now, "last_sweep", ahead, "subscriptions", n)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// prune deletes settled rows past the retention, at most once an hour. It
// is housekeeping: a stop in the middle of it is no error, and the next
// start prunes.
func (s *Scheduler) prune(ctx context.Context, now time.Time) {
	if ctx.Err() != nil {
		return
	}
	s.mu.Lock()
	due := now.Sub(s.lastPrune) >= time.Hour
	if due {
		s.lastPrune = now
	}
	s.mu.Unlock()
	if !due {
		return
	}
	n, err := s.ledger.Prune(ctx, now.Add(-s.opts.Retention))
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("prune ledger", "err", err)
		}
		return
	}
	if n > 0 {
		s.log.Info("pruned ledger", "rows", n, "older_than", s.opts.Retention)
	}
}
