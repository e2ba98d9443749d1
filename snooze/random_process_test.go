package snooze_test

import (
	"context"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/snooze"
	"github.com/meetingbot/meetingbot/timer"
)

// A process of TestRandomSnoozesCrashesAndProcesses: its store, whose
// every call may be its last, and, when its engine is driven by Run, what
// tells the case that the engine is idle.

// caseStore is what both stores provide to a case.
type caseStore interface {
	timer.Store
	snooze.Ledger
	snooze.Store
	TimerRange(ctx context.Context, from, to time.Time) ([]meetingbot.Timer, error)
	Owner() string
	Close() error
}

// crashStore is a process's store: its timers' and its ledger's calls may
// be its last. w, when set, follows the engine's passes and fires.
type crashStore struct {
	caseStore
	p    *process
	w    *runWatch
	note func(key, format string, args ...any)
}

func (s crashStore) NextTimers(ctx context.Context, now time.Time) ([]meetingbot.Timer, time.Time, int, error) {
	s.w.pass()
	var next time.Time
	var pending int
	due, err := guard(s.p, func() ([]meetingbot.Timer, error) {
		due, n, p, err := s.caseStore.NextTimers(ctx, now)
		next, pending = n, p
		return due, err
	})
	s.w.listed(len(due))
	s.p.listed(len(due))
	return due, next, pending, err
}

func (s crashStore) TakeTimer(ctx context.Context, key string, now time.Time, lease time.Duration) (meetingbot.Timer, bool, error) {
	var ok bool
	t, err := guard(s.p, func() (meetingbot.Timer, error) {
		t, taken, err := s.caseStore.TakeTimer(ctx, key, now, lease)
		ok = taken
		return t, err
	})
	s.w.took(ok && err == nil)
	s.note(key, "%v %s take %s: %v %v", now.Format("15:04:05.000"), s.Owner(), key, ok, err)
	return t, ok && err == nil, err
}

// The engine wakes itself after a timer moved, or given back for a retry
// (see timer.Engine.fire): the watch owes it a pass.
func (s crashStore) FinishTimer(ctx context.Context, t meetingbot.Timer, now time.Time) error {
	_, err := guard(s.p, func() (int, error) { return 0, s.caseStore.FinishTimer(ctx, t, now) })
	s.w.ended(false)
	s.note(t.Key, "%v %s finish %s: %s %q %v", now.Format("15:04:05.000"), s.Owner(), t.Key, t.Code, t.Reason, err)
	return err
}

func (s crashStore) MoveTimer(ctx context.Context, old, next meetingbot.Timer, now time.Time) error {
	_, err := guard(s.p, func() (int, error) { return 0, s.caseStore.MoveTimer(ctx, old, next, now) })
	s.w.ended(err == nil)
	s.note(old.Key, "%v %s move %s to %s: %v", now.Format("15:04:05.000"), s.Owner(), old.Key, next.Key, err)
	s.note(next.Key, "%v %s move %s to %s: %v", now.Format("15:04:05.000"), s.Owner(), old.Key, next.Key, err)
	return err
}

func (s crashStore) RetryTimer(ctx context.Context, t meetingbot.Timer, at time.Time, reason string) error {
	_, err := guard(s.p, func() (int, error) { return 0, s.caseStore.RetryTimer(ctx, t, at, reason) })
	s.w.ended(true)
	s.note(t.Key, "%v %s retry %s at %v: %s %v", s.p.now().Format("15:04:05.000"), s.Owner(), t.Key, at.Format("15:04:05.000"), reason, err)
	return err
}

func (s crashStore) RekeyTimer(ctx context.Context, key string, next meetingbot.Timer, reason string, now time.Time) (bool, error) {
	ok, err := guard(s.p, func() (bool, error) { return s.caseStore.RekeyTimer(ctx, key, next, reason, now) })
	s.note(key, "%v %s rekey %s to %s: %v %v", now.Format("15:04:05.000"), s.Owner(), key, next.Key, ok, err)
	s.note(next.Key, "%v %s rekey %s to %s: %v %v", now.Format("15:04:05.000"), s.Owner(), key, next.Key, ok, err)
	return ok, err
}

func (s crashStore) Entries(ctx context.Context, sub string, keys []string) (map[string]meetingbot.Entry, error) {
	return guard(s.p, func() (map[string]meetingbot.Entry, error) { return s.caseStore.Entries(ctx, sub, keys) })
}

func (s crashStore) Claim(ctx context.Context, e meetingbot.Entry, now, until time.Time) (meetingbot.ClaimStatus, meetingbot.Entry, error) {
	var prev meetingbot.Entry
	st, err := guard(s.p, func() (meetingbot.ClaimStatus, error) {
		st, pr, err := s.caseStore.Claim(ctx, e, now, until)
		prev = pr
		return st, err
	})
	return st, prev, err
}

func (s crashStore) Record(ctx context.Context, e meetingbot.Entry, now time.Time) error {
	_, err := guard(s.p, func() (int, error) { return 0, s.caseStore.Record(ctx, e, now) })
	return err
}

func (s crashStore) Release(ctx context.Context, e meetingbot.Entry, reason string) error {
	_, err := guard(s.p, func() (int, error) { return 0, s.caseStore.Release(ctx, e, reason) })
	return err
}

// runWatch follows an engine driven by Run, so that the case moves the
// clock only while the engine is idle: asleep on the clock since its last
// pass, that pass begun after every wake the engine was owed, and every
// timer it found due taken and fired. Each pass first waits for the fires
// of the passes before (Engine.Wait, in the engine's own goroutine, where
// nothing adds to them meanwhile): so the engine skips no due timer as in
// flight, and each one it lists is taken. A nil watch follows nothing.
type runWatch struct {
	engine   *timer.Engine
	mu       sync.Mutex
	owed     int // wakes owed: after the case's Add or Rekey, after a fire moved or gave back a timer
	passOwed int // owed when the latest pass began
	passes   int
	expect   int // timers listed due and not taken yet
	active   int // timers taken and not ended
	armedIn  int // the pass after which the engine last went to sleep
	asleep   *watchTimer
	until    time.Duration // on the elapsed clock, when that sleep ends
}

func (w *runWatch) pass() {
	if w == nil {
		return
	}
	w.engine.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.passes++
	w.passOwed = w.owed
}

func (w *runWatch) listed(n int) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expect += n
}

func (w *runWatch) took(ok bool) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expect--
	if ok {
		w.active++
	}
}

func (w *runWatch) ended(wakes bool) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.active--
	if wakes {
		w.owed++
	}
}

// woken says the case made the engine owe a pass (it added or moved a
// timer, then called Wake).
func (w *runWatch) woken() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.owed++
}

// idle reports whether the engine is idle, and until when it sleeps.
func (w *runWatch) idle() (bool, time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.asleep
	ok := t != nil && !t.done && w.armedIn == w.passes && w.passOwed == w.owed && w.expect == 0 && w.active == 0
	return ok, w.until
}

// watchClock is the engine's clock when Run drives it: the case's fake
// clock, telling the watch when the engine goes to sleep and wakes.
type watchClock struct {
	*clock.Fake
	w *runWatch
}

type watchTimer struct {
	w    *runWatch
	t    clock.Timer
	done bool // fired or stopped
}

func (c watchClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	wt := &watchTimer{w: c.w}
	c.w.mu.Lock()
	c.w.asleep, c.w.armedIn, c.w.until = wt, c.w.passes, c.Elapsed()+d
	c.w.mu.Unlock()
	wt.t = c.Fake.AfterFunc(d, func() {
		wt.end()
		f()
	})
	return wt
}

func (t *watchTimer) end() {
	t.w.mu.Lock()
	defer t.w.mu.Unlock()
	t.done = true
}

func (t *watchTimer) Stop() bool {
	t.end()
	return t.t.Stop()
}
