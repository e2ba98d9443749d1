// Package clock is time as the bot's engine sees it: a wall clock for
// instants, a clock that never jumps for elapsed time, and timers. Real is
// the system's; Fake is one that tests move by hand, firing its timers at
// the instants they were set for.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and runs functions later.
type Clock interface {
	// Now returns the wall clock's reading: an instant to compare with a
	// meeting's start. It may jump, forward or back.
	Now() time.Time
	// Elapsed returns the time since a fixed origin on a clock that never
	// jumps. Comparing it with Now tells a step of the wall clock from
	// time passing.
	Elapsed() time.Duration
	// AfterFunc calls f in its own goroutine once d has elapsed (elapsed
	// time, not wall time: a step of the wall clock does not move a timer).
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending call of AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not started, and reports whether
	// it did.
	Stop() bool
}

// Real is the system's clock. Its zero value is not ready: use New.
type Real struct {
	origin time.Time
}

// New returns the system's clock.
func New() Real { return Real{origin: time.Now()} }

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// Elapsed returns the monotonic time since New.
func (r Real) Elapsed() time.Duration { return time.Since(r.origin) }

// AfterFunc is time.AfterFunc.
func (Real) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Every calls pass at once and then each time interval has elapsed on c
// after the previous call returned, until ctx ends; it returns then. A
// pass under way when ctx ends finishes first.
func Every(ctx context.Context, c Clock, interval time.Duration, pass func()) {
	for {
		pass()
		wait := make(chan struct{})
		t := c.AfterFunc(interval, func() { close(wait) })
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-wait:
		}
	}
}
