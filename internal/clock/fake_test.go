package clock_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/internal/clock"
)

var t0 = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

func TestFakeFiresTimersInOrderAtTheirInstants(t *testing.T) {
	c := clock.NewFake(t0)
	var got []string
	record := func(name string) func() {
		return func() { got = append(got, name+"@"+c.Now().Format("15:04:05")) }
	}
	c.AfterFunc(30*time.Second, record("b"))
	c.AfterFunc(10*time.Second, func() {
		record("a")()
		c.AfterFunc(5*time.Second, record("a+5s")) // set by a timer, due within the move
	})
	stopped := c.AfterFunc(20*time.Second, record("stopped"))
	c.AfterFunc(2*time.Minute, record("later"))
	if !stopped.Stop() {
		t.Errorf("Stop() of a pending timer = false, want true")
	}

	c.Set(t0.Add(time.Minute))
	want := []string{"a@08:00:10", "a+5s@08:00:15", "b@08:00:30"}
	if !slices.Equal(got, want) {
		t.Errorf("fired = %v, want %v", got, want)
	}
	if now := c.Now(); !now.Equal(t0.Add(time.Minute)) {
		t.Errorf("Now() after Set = %v, want %v", now, t0.Add(time.Minute))
	}
	if n := c.Pending(); n != 1 {
		t.Errorf("Pending() = %d, want 1", n)
	}
}

func TestFakeJumpMovesOnlyTheWallClock(t *testing.T) {
	c := clock.NewFake(t0)
	fired := false
	c.AfterFunc(time.Minute, func() { fired = true })
	c.Jump(time.Hour)
	if fired || c.Elapsed() != 0 {
		t.Errorf("after Jump(1h): fired = %v, Elapsed() = %v; want false, 0", fired, c.Elapsed())
	}
	c.Set(t0) // back: a step, not time passing
	if fired || c.Elapsed() != 0 || !c.Now().Equal(t0) {
		t.Errorf("after Set back: fired = %v, Elapsed() = %v, Now() = %v", fired, c.Elapsed(), c.Now())
	}
	c.Advance(time.Minute)
	if !fired || c.Elapsed() != time.Minute {
		t.Errorf("after Advance(1m): fired = %v, Elapsed() = %v; want true, 1m", fired, c.Elapsed())
	}
}

func TestFakeSleep(t *testing.T) {
	c := clock.NewFake(t0)
	if err := c.Sleep(context.Background(), 3*time.Second); err != nil {
		t.Fatalf("Sleep(3s) = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ctx, time.Hour); err == nil {
		t.Errorf("Sleep on a done context = nil, want its error")
	}
	if got := c.Sleeps(); !slices.Equal(got, []time.Duration{3 * time.Second}) || !c.Now().Equal(t0.Add(3*time.Second)) {
		t.Errorf("Sleeps() = %v, Now() = %v", got, c.Now())
	}
}

func TestRealTimerFires(t *testing.T) {
	c := clock.New()
	done := make(chan struct{})
	c.AfterFunc(time.Millisecond, func() { close(done) })
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Real.AfterFunc(1ms) did not fire within 10s")
	}
	if c.Elapsed() <= 0 {
		t.Errorf("Real.Elapsed() = %v, want > 0", c.Elapsed())
	}
}

func TestFakeTimerMaySleep(t *testing.T) {
	c := clock.NewFake(t0)
	var got []string
	c.AfterFunc(10*time.Second, func() {
		c.Sleep(context.Background(), 30*time.Second) // a send paced inside a timer
		got = append(got, "slept@"+c.Now().Format("15:04:05"))
	})
	c.AfterFunc(20*time.Second, func() { got = append(got, "b@"+c.Now().Format("15:04:05")) })
	c.Set(t0.Add(15 * time.Second))
	want := []string{"slept@08:00:40", "b@08:00:40"}
	if !slices.Equal(got, want) {
		t.Errorf("fired = %v, want %v", got, want)
	}
	if now := c.Now(); !now.Equal(t0.Add(40 * time.Second)) {
		t.Errorf("Now() = %v, want 08:00:40: time passed in the timer is not taken back", now)
	}
}
