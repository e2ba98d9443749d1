package clock

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Fake is a clock that moves only when told. Its timers fire when the
// clock is moved past them, in the order of their instants, synchronously
// in the goroutine that moved it, each seeing Now at its own instant; a
// timer set by a timer that fires within the same move fires too, and a
// timer that lets time pass (Sleep) moves the clock without waiting. It is
// safe for concurrent use. Create it with NewFake.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	el     time.Duration
	seq    int
	timers []*fakeTimer
	sleeps []time.Duration
	firing sync.Mutex // one move fires at a time
}

type fakeTimer struct {
	f   *Fake
	at  time.Duration // on the elapsed clock
	seq int
	fn  func()
}

// NewFake returns a Fake reading t.
func NewFake(t time.Time) *Fake { return &Fake{now: t} }

// Now returns the wall clock's reading.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Elapsed returns how far the clock has moved forward since NewFake,
// steps of the wall clock (Jump, or Set to an earlier instant) excluded.
func (f *Fake) Elapsed() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.el
}

// AfterFunc arranges for fn to be called once the clock has moved d
// forward.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	t := &fakeTimer{f: f, at: f.el + max(d, 0), seq: f.seq, fn: fn}
	f.timers = append(f.timers, t)
	return t
}

// Stop removes the timer if it has not fired.
func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	i := slices.Index(t.f.timers, t)
	if i < 0 {
		return false
	}
	t.f.timers = slices.Delete(t.f.timers, i, i+1)
	return true
}

// Set moves the wall clock to t. Forward, time passes: the elapsed clock
// moves as much, and the timers due by then fire. Back, the wall clock
// steps back and nothing else moves.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	d := t.Sub(f.now)
	f.mu.Unlock()
	if d < 0 {
		f.Jump(d)
		return
	}
	f.Advance(d)
}

// Advance lets d pass, firing the timers due by then. Called while timers
// fire (by a timer that sleeps, or from another goroutine), it only lets
// the time pass: the timers due fire in the move under way.
func (f *Fake) Advance(d time.Duration) {
	d = max(d, 0)
	if !f.firing.TryLock() {
		f.mu.Lock()
		f.now, f.el = f.now.Add(d), f.el+d
		f.mu.Unlock()
		return
	}
	defer f.firing.Unlock()
	f.mu.Lock()
	end := f.el + d
	f.mu.Unlock()
	for {
		f.mu.Lock()
		end = max(end, f.el) // a timer may have let time pass
		next := f.next(end)
		if next == nil {
			f.now, f.el = f.now.Add(end-f.el), end
			f.mu.Unlock()
			return
		}
		f.timers = slices.DeleteFunc(f.timers, func(t *fakeTimer) bool { return t == next })
		if next.at > f.el {
			f.now, f.el = f.now.Add(next.at-f.el), next.at
		}
		f.mu.Unlock()
		next.fn()
	}
}

// next returns the earliest timer due by end, or nil.
func (f *Fake) next(end time.Duration) *fakeTimer {
	var best *fakeTimer
	for _, t := range f.timers {
		if t.at <= end && (best == nil || t.at < best.at || t.at == best.at && t.seq < best.seq) {
			best = t
		}
	}
	return best
}

// Jump steps the wall clock by d, forward or back, as a bad clock or a
// correction does: no time passes and no timer fires.
func (f *Fake) Jump(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

// Sleep lets d pass at once, as Advance does, and records it; it returns
// ctx.Err() without waiting when ctx is done. Give it to code that waits,
// so its waits cost no real time.
func (f *Fake) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	f.sleeps = append(f.sleeps, d)
	f.mu.Unlock()
	f.Advance(d)
	return nil
}

// Sleeps returns the durations Sleep was asked for, in order.
func (f *Fake) Sleeps() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sleeps)
}

// Pending returns how many timers have not fired.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}
