// Package scheduler is the engine of the bot: it sweeps each subscription's
// calendar for the reminders that became due since it last looked, sends
// each exactly once, recording it in a ledger, and plans the reminders due
// before its next sweep on timers that fire at their trigger instants.
//
// A sweep is the safety net: it re-reads the calendar, sends whatever is
// due and unsent (late, when a timer was lost to a crash, a restart or a
// clock jump), and moves the subscription's cursor. A timer is the
// precision: just before its trigger it confirms the meeting against the
// calendar, then sends through the same claim, send and record path.
// Subscriptions are swept independently, so a slow calendar or a busy
// destination never holds up another's reminders. A sweep also follows the
// reminders already sent: when a meeting moves or is cancelled after its
// reminder, the message is edited to say so (follow.go).
//
// The package declares what it consumes (consumes.go): a Source of
// meetings, a Notifier that delivers one reminder, and a Ledger that keeps
// cursors and outcomes. It speaks the root package's words and imports no
// adapter; the calendar, notify and storage packages provide what it
// consumes, and cmd/bot wires them.
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
)

// Options tune a Scheduler. The zero value of each field picks its default.
type Options struct {
	// Clock tells the time and runs the timers; clock.New() by default.
	// Tests pass a *clock.Fake.
	Clock clock.Clock
	// Interval is how often each subscription is swept;
	// meetingbot.DefaultTickInterval by default. It bounds how soon a
	// calendar change is seen, not how late a reminder goes out.
	Interval time.Duration
	// MaxCatchUp bounds how far back a sweep reads after a gap; 24h by default.
	MaxCatchUp time.Duration
	// Retention is how long ledger rows are kept after their meeting's
	// start; 30 days by default. It must exceed MaxCatchUp.
	Retention time.Duration
	// Lease is how long a claim keeps other processes off a key where
	// liveness cannot be told; 2m by default. Replicas on PostgreSQL take
	// over a dead one's claims once its heartbeat and its claims' leases
	// have run out, so there it is the heartbeat's span: a longer lease
	// keeps a dead replica's reminders from going out.
	Lease time.Duration
	// SendTimeout bounds one delivery, retries included; Lease/2 by
	// default, and never more, so a claim outlives the send it guards by a
	// margin (a quarter of the lease at least: see leaseMargin). Over a
	// Holder, whose claims the heartbeat keeps, DefaultHeldSendTimeout by
	// default, and the send is cut when the heartbeat lapses.
	SendTimeout time.Duration
	// ShutdownGrace is how long a send in flight may go on once the
	// context ends; 5s by default.
	ShutdownGrace time.Duration
	// ReadTimeout bounds one calendar read, retries included; 1m by default.
	ReadTimeout time.Duration
	// FireLead is how long before its trigger a timer fires to confirm the
	// meeting against the calendar, so that the reminder itself goes out at
	// the trigger; 1s by default.
	FireLead time.Duration
	// CheckTimeout bounds that check, and so does the trigger (or
	// FireLead, for a timer that fired late): past either the reminder
	// goes out on the sweep's reading of the calendar; 5s by default.
	CheckTimeout time.Duration
	// DigestAbove is how many reminders of one subscription due at one
	// instant go out one by one; more go out as one digest message, so a
	// flood of invitations neither floods the reader nor makes the last
	// of them late behind Slack's pace of a post a second; 5 by default.
	DigestAbove int
	// Early is the most a reminder may be posted ahead of its trigger when
	// more fall due together than the posting budget (PostsPerMinute)
	// passes by their triggers, and never more than a quarter of its
	// offset (meetingbot.EarlyShare); 0, the default, posts none ahead. See early.go.
	Early time.Duration
	// PostsPerMinute tells the posts a minute the notifier paces the
	// workspace to now (notify's posting budget, lowered by Slack's 429s);
	// posting ahead needs it.
	PostsPerMinute func() float64
	// MaxReads bounds the calendar reads of sweeps in flight, and MaxSends
	// the deliveries in flight; 64 and 256 by default. Sweeps in flight
	// are bounded by their sum, which bounds memory. They are guards on
	// resources, not the pace: the Calendar client keeps within Google's
	// quotas and the Slack client paces each channel.
	MaxReads, MaxSends int
	// ClockJump is how far the wall clock may run ahead of the time
	// elapsed since it was last read before the scheduler distrusts it; 1m
	// by default. While it is distrusted nothing is swept or sent: nothing
	// is recorded as started and no cursor moves. The jump is believed
	// once the clock has kept its new time for JumpConfirm (2m by default),
	// or forgotten when the clock comes back.
	ClockJump, JumpConfirm time.Duration
	// Subscriptions, if set, is asked at every round (and Tick) for the
	// subscriptions beyond those given to New: the ones people made from
	// Slack, which come and go without a restart. Those given to New win
	// over one of the same ID. When it fails, the last list stands.
	Subscriptions func(ctx context.Context) ([]meetingbot.Subscription, error)
	// Share, if set, is asked at every round (and Tick) which of the
	// subscriptions this process sweeps, the others being other replicas'
	// (storage/postgres's Share). By default it sweeps all. A subscription
	// new to the share is swept at once, and this process's claims of
	// subscriptions that left it are released to their new holder.
	Share func(ctx context.Context, subs []meetingbot.Subscription) ([]meetingbot.Subscription, error)
	// Logger receives the scheduler's logs; slog.Default() by default.
	Logger *slog.Logger
	// Observer, if set, is told of outcomes, sweeps and timers.
	Observer Observer
}

// DefaultHeldSendTimeout is SendTimeout's default over a Holder: long
// enough for Slack's pace of about a post a second to a channel to serve a
// minute of reminders to one channel.
const DefaultHeldSendTimeout = time.Minute

// Scheduler sweeps subscriptions and fires their reminders. Create it with
// New; run it with Run, or drive it with Tick in tests.
type Scheduler struct {
	subs   []meetingbot.Subscription
	source Source
	notify Notifier
	ledger Ledger
	opts   Options
	clock  clock.Clock
	log    *slog.Logger
	reads  chan struct{} // one token per calendar read of a sweep in flight
	// sweeps holds one token per sweep in flight: a sweep keeps what it
	// read until its sends are done, so without a bound a first round over
	// thousands of subscriptions with much due would hold every calendar's
	// meetings at once.
	sweeps chan struct{}
	sends  chan struct{} // one token per delivery in flight
	wg     sync.WaitGroup

	mu        sync.Mutex
	stopped   bool
	lastErr   map[string]string               // per subscription, to report each failure once
	behind    map[string]bool                 // subscriptions whose cursor is ahead of the clock
	lastPrune time.Time                       // on the wall clock
	inflight  map[string]bool                 // subscription|key of the claims this process is working on
	sweeping  map[string]bool                 // subscriptions with a sweep in flight
	again     map[string]bool                 // subscriptions to sweep again once their sweep in flight ends
	lastSweep map[string]time.Time            // each subscription's last sweep, on the wall clock
	timers    map[string]map[string]*armed    // per subscription, by key, the reminders planned
	armedN    int                             // the timers in timers, counted as they come and go
	pending   map[string]time.Time            // cursor moves not written yet
	cursors   map[string]time.Time            // each subscription's cursor as this process last read or moved it
	settled   map[string]map[string]time.Time // per subscription, keys known to be final in the ledger, with their meeting's start (see noteSettled)
	lastFlush time.Duration                   // on the elapsed clock
	readsNow  int
	ledgerErr error                     // the ledger's last failure since the last round
	extra     []meetingbot.Subscription // the last list Options.Subscriptions gave
	mine      []meetingbot.Subscription // the last share
	shared    bool                      // Options.Share has answered once
	guard     jumpGuard
	asked     map[string]map[string]time.Time // per subscription, by key: when follow last read a meeting moved beyond the window
	resweeps  map[string]time.Time            // per subscription, a sweep armed for when a claim another holds may be free
	spreading bool                            // the planner of posts ahead is armed (early.go)
	popups    map[string]map[string]popups    // per subscription reminding as the calendar says, by meeting: its popups as swept (see changed.go)
}

// New returns a Scheduler over subs. It fails if two subscriptions share an
// ID, a subscription has no offsets or a negative one, or the options
// contradict each other.
func New(subs []meetingbot.Subscription, source Source, notifier Notifier, ledger Ledger, opts Options) (*Scheduler, error) {
	if opts.Clock == nil {
		opts.Clock = clock.New()
	}
	opts.Interval = orDefault(opts.Interval, meetingbot.DefaultTickInterval)
	opts.MaxCatchUp = orDefault(opts.MaxCatchUp, 24*time.Hour)
	opts.Retention = orDefault(opts.Retention, 30*24*time.Hour)
	opts.Lease = orDefault(opts.Lease, 2*time.Minute)
	if _, held := ledger.(Holder); held {
		// Claims are held by the heartbeat past their leases; Hold cuts a
		// send the heartbeat no longer covers.
		opts.SendTimeout = orDefault(opts.SendTimeout, DefaultHeldSendTimeout)
	} else {
		opts.SendTimeout = min(orDefault(opts.SendTimeout, opts.Lease/2), opts.Lease/2)
	}
	opts.ReadTimeout = orDefault(opts.ReadTimeout, time.Minute)
	opts.ShutdownGrace = orDefault(opts.ShutdownGrace, 5*time.Second)
	opts.FireLead = orDefault(opts.FireLead, time.Second)
	opts.CheckTimeout = orDefault(opts.CheckTimeout, 5*time.Second)
	opts.ClockJump = orDefault(opts.ClockJump, time.Minute)
	opts.JumpConfirm = orDefault(opts.JumpConfirm, 2*time.Minute)
	if opts.MaxReads <= 0 {
		opts.MaxReads = 64
	}
	if opts.DigestAbove <= 0 {
		opts.DigestAbove = 5
	}
	if opts.MaxSends <= 0 {
		opts.MaxSends = 256
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Retention <= opts.MaxCatchUp {
		return nil, fmt.Errorf("scheduler: retention %v must exceed the catch-up span %v, or old reminders could be sent again", opts.Retention, opts.MaxCatchUp)
	}
	seen := map[string]bool{}
	for _, s := range subs {
		if err := valid(s); err != nil {
			return nil, fmt.Errorf("scheduler: %w", err)
		}
		if seen[s.ID] {
			return nil, fmt.Errorf("scheduler: subscription %q appears twice", s.ID)
		}
		seen[s.ID] = true
	}
	return &Scheduler{
		subs: subs, source: source, notify: notifier, ledger: ledger, opts: opts,
		clock: opts.Clock, log: opts.Logger,
		reads: make(chan struct{}, opts.MaxReads), sends: make(chan struct{}, opts.MaxSends),
		sweeps:  make(chan struct{}, opts.MaxReads+opts.MaxSends),
		lastErr: map[string]string{}, behind: map[string]bool{}, inflight: map[string]bool{},
		sweeping: map[string]bool{}, again: map[string]bool{}, timers: map[string]map[string]*armed{},
		pending: map[string]time.Time{}, cursors: map[string]time.Time{}, settled: map[string]map[string]time.Time{},
		resweeps:  map[string]time.Time{},
		lastFlush: -time.Hour,
	}, nil
}

// valid reports what is wrong with a subscription the scheduler cannot
// sweep.
func valid(s meetingbot.Subscription) error {
	if s.ID == "" {
		return errors.New("subscription without an ID")
	}
	if !s.Reminds() {
		return fmt.Errorf("subscription %q has no reminder offsets", s.ID)
	}
	for _, o := range s.Offsets {
		if o < 0 {
			return fmt.Errorf("subscription %q: negative offset %v", s.ID, o)
		}
	}
	return nil
}

// current returns every subscription there is now, those given to New and
// those Options.Subscriptions adds, the ones of them this process sweeps,
// its share, and which of those came into the share since the last round
// (none on the first). A source that fails keeps the last list.
func (s *Scheduler) current(ctx context.Context) (all, mine []meetingbot.Subscription, fresh map[string]bool) {
	all = s.subs
	if s.opts.Subscriptions != nil {
		extra, err := s.opts.Subscriptions(ctx)
		s.mu.Lock()
		if err == nil {
			s.extra = extra
		} else {
			extra = s.extra
		}
		s.mu.Unlock()
		if err != nil && ctx.Err() == nil {
			s.ledgerFailed(err)
			s.log.Error("read the subscriptions made in Slack; keeping the last list", "err", err)
		}
		seen := make(map[string]bool, len(s.subs)+len(extra))
		for _, sub := range s.subs {
			seen[sub.ID] = true
		}
		all = slices.Clip(all)
		for _, sub := range extra {
			if seen[sub.ID] || valid(sub) != nil {
				continue
			}
			seen[sub.ID] = true
			all = append(all, sub)
		}
	}
	if s.opts.Share == nil {
		return all, all, nil
	}
	mine, err := s.opts.Share(ctx, all)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			s.ledgerErr = err
			s.log.Error("renew this replica's share of the subscriptions; sweeping the last share", "err", err)
		}
		return all, s.mine, nil
	}
	if s.shared {
		had := make(map[string]bool, len(s.mine))
		for _, sub := range s.mine {
			had[sub.ID] = true
		}
		for _, sub := range mine {
			if !had[sub.ID] {
				if fresh == nil {
					fresh = map[string]bool{}
				}
				fresh[sub.ID] = true
			}
		}
	}
	s.mine, s.shared = mine, true
	return all, mine, fresh
}

// orDefault returns v, or def when v is not positive.
func orDefault(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// Run sweeps every subscription at once and then every Interval, each at
// its own phase within the interval, until ctx ends; in between, timers
// send the reminders planned. It returns nil once ctx has ended, no timer
// is left, and the sweeps and sends in flight have finished and been
// recorded (a send gets ShutdownGrace to finish; none starts after ctx
// ends).
func (s *Scheduler) Run(ctx context.Context) error {
	for first := true; ; first = false {
		s.round(ctx, first)
		if !s.wait(ctx, s.opts.Interval) {
			break
		}
	}
	s.Stop()
	if err := s.flush(context.WithoutCancel(ctx)); err != nil {
		s.log.Error("record sweep progress", "err", err)
	}
	return nil
}

// wait waits d on the scheduler's clock and reports whether ctx is still
// live.
func (s *Scheduler) wait(ctx context.Context, d time.Duration) bool {
	done := make(chan struct{})
	t := s.clock.AfterFunc(d, func() { close(done) })
	select {
	case <-ctx.Done():
		t.Stop()
		return false
	case <-done:
		return ctx.Err() == nil
	}
}

// Stop cancels every timer and waits for the sweeps and sends in flight,
// which end with the context they were started with. A stopped Scheduler
// starts nothing new. Run calls it before it returns; a test calls it to
// drop a process without a trace, as a crash does.
func (s *Scheduler) Stop() {
	s.mu.Lock()
	s.stopped = true
	for sub, have := range s.timers {
		for _, t := range have {
			t.timer.Stop()
		}
		delete(s.timers, sub)
	}
	s.armedN = 0
	s.mu.Unlock()
	s.wg.Wait()
}

// enter reports whether work may start, and counts it for Stop to wait
// for; the caller calls s.wg.Done when it ends.
func (s *Scheduler) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return false
	}
	s.wg.Add(1)
	return true
}

// after runs fn once d has passed on the scheduler's clock, unless the
// scheduler has stopped by then.
func (s *Scheduler) after(d time.Duration, fn func()) clock.Timer {
	return s.clock.AfterFunc(d, func() {
		if !s.enter() {
			return
		}
		defer s.wg.Done()
		fn()
	})
}

// round starts a sweep of every subscription not being swept already: at
// once on the first round, then each at its phase in the interval, so that
// calendar reads spread evenly instead of bursting at the tick. A
// subscription new to this replica's share is swept at once: another
// replica stopped sweeping it, and its reminders must not wait longer.
func (s *Scheduler) round(ctx context.Context, first bool) {
	start := time.Now()
	now := s.clock.Now().UTC()
	if !s.trustClock(now) {
		return
	}
	all, subs, fresh := s.current(ctx)
	if err := s.dropRemoved(ctx, all, subs, now); err != nil && ctx.Err() == nil {
		s.ledgerFailed(err)
		s.log.Error("read the ledger's interrupted sends", "err", err)
	}
	s.dropOthers(subs)
	if err := s.rescueStalled(ctx, all, now); err != nil && ctx.Err() == nil {
		s.ledgerFailed(err)
		s.log.Error("read the other replicas' stalled sends", "err", err)
	}
	for _, sub := range subs {
		if first || fresh[sub.ID] {
			if s.enter() {
				go func() {
					defer s.wg.Done()
					s.sweepOne(ctx, sub)
				}()
			}
			continue
		}
		s.after(phase(sub.ID, s.opts.Interval), func() {
			if ctx.Err() == nil {
				s.sweepOne(ctx, sub)
			}
		})
	}
	s.prune(ctx, now)
	s.mu.Lock()
	err := s.ledgerErr
	s.ledgerErr = nil
	s.mu.Unlock()
	if s.opts.Observer != nil && ctx.Err() == nil {
		s.opts.Observer.Ticked(now, time.Since(start), err)
	}
}

// ledgerFailed notes a failure of the ledger for the next round's report.
func (s *Scheduler) ledgerFailed(err error) {
	s.mu.Lock()
	s.ledgerErr = err
	s.mu.Unlock()
}

// phaseSlots is how many instants of an interval the sweeps start at.
const phaseSlots = 32

// phase spreads subscriptions over the interval by a hash of their ID, so
// that a subscription keeps its phase when others come and go, at one of
// phaseSlots instants: the sweeps of a slot run together, and the process
// wakes 32 times an interval rather than once per subscription, which at
// thousands of subscriptions cost more CPU in waking and sleeping than the
// sweeps themselves.
func phase(id string, interval time.Duration) time.Duration {
	var h uint64 = 14695981039346656037 // FNV-1a
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	return time.Duration(h%phaseSlots) * (interval / phaseSlots)
}

// Tick sweeps every subscription once at the clock's current instant and
// waits for all of them, then records their progress. A subscription that
// fails is logged and retried on the next sweep without holding up the
// others; Tick returns an error only when the ledger itself cannot be read
// or written. Tests drive the scheduler with it; timers it plans fire as
// the clock moves.
func (s *Scheduler) Tick(ctx context.Context) (err error) {
	start := time.Now()
	now := s.clock.Now().UTC()
	if !s.trustClock(now) {
		return nil
	}
	if s.opts.Observer != nil {
		defer func() { s.opts.Observer.Ticked(now, time.Since(start), err) }()
	}
	all, subs, _ := s.current(ctx)
	if err := s.dropRemoved(ctx, all, subs, now); err != nil {
		if ctx.Err() != nil {
			return nil // stopping
		}
		return fmt.Errorf("scheduler: %w", err)
	}
	s.dropOthers(subs)
	errs := make([]error, len(subs))
	var wg sync.WaitGroup
	for i, sub := range subs {
		wg.Go(func() { errs[i] = s.sweepAt(ctx, sub, now) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	// Cursors are written after the sends: a crash before this leaves them
	// behind, and the ledger keeps the next sweep from sending twice.
	if err := s.flush(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	s.prune(ctx, now)
	return nil
}

// sweepOne sweeps sub now, unless a sweep of it is in flight; a ledger
// failure is logged.
func (s *Scheduler) sweepOne(ctx context.Context, sub meetingbot.Subscription) {
	now := s.clock.Now().UTC()
	if !s.trustClock(now) {
		return
	}
	if err := s.sweepAt(ctx, sub, now); err != nil && ctx.Err() == nil {
		s.ledgerFailed(err)
		s.log.Error("read the ledger", "subscription", sub.ID, "err", err)
	}
}

// advance notes that sub's sweep is complete up to now. Cursor moves are
// written together, at most about once a second, so that thousands of
// subscriptions cost one write a second, not one each; a crash before the
// write costs a wider read next time, never a reminder.
func (s *Scheduler) advance(ctx context.Context, sub string, now time.Time) {
	s.mu.Lock()
	s.pending[sub] = now
	s.cursors[sub] = later(s.cursors[sub], now)
	due := s.clock.Elapsed()-s.lastFlush >= time.Second
	s.mu.Unlock()
	if due {
		if err := s.flush(context.WithoutCancel(ctx)); err != nil {
			s.ledgerFailed(err)
			s.log.Error("record sweep progress", "err", err)
		}
	}
}

// cursor returns sub's cursor: as this process last read or moved it, or
// else from the ledger. Only this process moves the cursors of the
// subscriptions it sweeps; one that another process moved while it swept
// the subscription (replicas sharing the subscriptions anew) is read from
// the ledger again, since dropOthers forgets it when the subscription
// leaves this process's share. A cursor older than the ledger's would only
// widen the sweep's read.
func (s *Scheduler) cursor(ctx context.Context, sub string) (time.Time, bool, error) {
	s.mu.Lock()
	c, ok := s.cursors[sub]
	s.mu.Unlock()
	if ok {
		return c, true, nil
	}
	c, ok, err := s.ledger.Cursor(ctx, sub)
	if err != nil || !ok {
		return c, ok, err
	}
	s.mu.Lock()
	c = later(s.cursors[sub], c)
	s.cursors[sub] = c
	s.mu.Unlock()
	return c, true, nil
}

// flush writes the cursor moves noted so far.
func (s *Scheduler) flush(ctx context.Context) error {
	s.mu.Lock()
	batch := s.pending
	s.pending = map[string]time.Time{}
	s.lastFlush = s.clock.Elapsed()
	s.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	if err := s.ledger.AdvanceCursors(ctx, batch); err != nil {
		s.mu.Lock()
		for sub, at := range batch { // keep them for the next try
			if at.After(s.pending[sub]) {
				s.pending[sub] = at
			}
		}
		s.mu.Unlock()
		return err
	}
	return nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// prune deletes the rows past the retention, at most once an hour. It is
// housekeeping: a stop in the middle of it is no error, and the next start
// prunes.
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
	switch {
	case err != nil && ctx.Err() != nil:
		// Shutting down: the next process prunes.
	case err != nil:
		s.log.Error("prune ledger", "err", err)
	case n > 0:
		s.log.Info("pruned ledger", "rows", n, "older_than", s.opts.Retention)
	}
}
