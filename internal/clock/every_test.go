package clock_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/internal/clock"
)

// Every passes at once, then once each interval on the clock, and
// returns when its context ends.
func TestEvery(t *testing.T) {
	c := clock.NewFake(time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC))
	ctx, cancel := context.WithCancel(t.Context())
	var passes atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		clock.Every(ctx, c, time.Minute, func() { passes.Add(1) })
	}()
	waitFor := func(n int32) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); passes.Load() != n || c.Pending() != 1; {
			if time.Now().After(deadline) {
				t.Fatalf("passes = %d with %d timers pending, want %d with one", passes.Load(), c.Pending(), n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitFor(1)
	c.Advance(59 * time.Second)
	if got := passes.Load(); got != 1 {
		t.Fatalf("passes before the interval = %d, want 1", got)
	}
	c.Advance(time.Second)
	waitFor(2)
	cancel()
	<-done
	if c.Pending() != 0 {
		t.Errorf("timers pending after the context ended = %d, want 0", c.Pending())
	}
}
