package timer_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/storage/sqlite"
	"github.com/meetingbot/meetingbot/timer"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

// fired is a Handler that records each timer it fires and when.
type fired struct {
	c  *clock.Fake
	mu sync.Mutex
	at map[string]time.Time
	ch chan string
}

func newFired(c *clock.Fake) *fired {
	return &fired{c: c, at: map[string]time.Time{}, ch: make(chan string, 16)}
}

func (f *fired) Fire(ctx context.Context, t meetingbot.Timer) timer.Result {
	f.mu.Lock()
	f.at[t.Key] = f.c.Now()
	f.mu.Unlock()
	f.ch <- t.Key
	return timer.Result{State: meetingbot.TimerDone, Code: meetingbot.ReasonSent}
}

func (f *fired) when(key string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	at, ok := f.at[key]
	return at, ok
}

// passObserver signals each pass of the engine.
type passObserver chan int

func (p passObserver) TimerFired(meetingbot.Timer) {}
func (p passObserver) TimersPending(n int)         { p <- n }

func timerAt(key string, at time.Time) meetingbot.Timer {
	return meetingbot.Timer{Key: key, Kind: "test", Subject: "U1", FireAt: at, State: meetingbot.TimerPending}
}

// running starts e.Run and returns once it sleeps on the clock, and a
// stop that ends it.
func running(t *testing.T, e *timer.Engine, c *clock.Fake) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = e.Run(ctx)
	}()
	asleep(t, c, 1)
	return func() { cancel(); <-done }
}

// asleep waits until the clock has n timers armed: the engine waiting.
func asleep(t *testing.T, c *clock.Fake, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for c.Pending() < n {
		if time.Now().After(deadline) {
			t.Fatalf("the engine never slept on the clock")
		}
		time.Sleep(time.Millisecond)
	}
}

func waitFired(t *testing.T, f *fired, key string) {
	t.Helper()
	select {
	case got := <-f.ch:
		require.Equal(t, key, got, "the timer fired")
	case <-time.After(10 * time.Second):
		t.Fatalf("%s never fired", key)
	}
}

func open(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// TestEngineWakesEarlyForAnEarlierTimer: asleep until a timer ten minutes
// ahead, the engine wakes for one added a minute ahead, and fires each at
// its instant.
func TestEngineWakesEarlyForAnEarlierTimer(t *testing.T) {
	c := clock.NewFake(t0)
	store := open(t, filepath.Join(t.TempDir(), "bot.db"))
	f := newFired(c)
	passes := make(chan int, 16)
	e, err := timer.New(store, map[string]timer.Handler{"test": f}, timer.Options{Clock: c, Poll: time.Hour,
		Observer: passObserver(passes)})
	require.NoError(t, err)
	_, _, err = store.AddTimer(t.Context(), timerAt("late", t0.Add(10*time.Minute)), t0)
	require.NoError(t, err)
	stop := running(t, e, c)
	defer stop()
	if n := <-passes; n != 1 {
		t.Errorf("TimersPending(%d) after the first pass, want 1: the one stored", n)
	}

	_, added, err := e.Add(t.Context(), timerAt("soon", t0.Add(time.Minute)))
	require.NoError(t, err)
	require.True(t, added)
	select {
	case <-passes: // woken by the add, not by its wake ten minutes ahead
	case <-time.After(10 * time.Second):
		t.Fatal("adding an earlier timer did not wake the engine")
	}
	asleep(t, c, 1)
	c.Set(t0.Add(time.Minute))
	waitFired(t, f, "soon")
	if at, _ := f.when("soon"); !at.Equal(t0.Add(time.Minute)) {
		t.Errorf("soon fired at %v, want %v", at, t0.Add(time.Minute))
	}
	asleep(t, c, 1)
	c.Set(t0.Add(10 * time.Minute))
	waitFired(t, f, "late")
	if at, _ := f.when("late"); !at.Equal(t0.Add(10 * time.Minute)) {
		t.Errorf("late fired at %v, want %v", at, t0.Add(10*time.Minute))
	}
}

// TestEngineSeesAnotherProcessesTimerWithinPoll: a timer another process
// stored cannot wake this one, which finds it when it reads the store
// again, within Poll, and fires it then, late.
func TestEngineSeesAnotherProcessesTimerWithinPoll(t *testing.T) {
	c := clock.NewFake(t0)
	path := filepath.Join(t.TempDir(), "bot.db")
	store, other := open(t, path), open(t, path)
	f := newFired(c)
	e, err := timer.New(store, map[string]timer.Handler{"test": f}, timer.Options{Clock: c, Poll: 30 * time.Second})
	require.NoError(t, err)
	stop := running(t, e, c)
	defer stop()

	_, _, err = other.AddTimer(t.Context(), timerAt("elsewhere", t0.Add(10*time.Second)), t0)
	require.NoError(t, err)
	c.Set(t0.Add(10 * time.Second))
	if _, ok := f.when("elsewhere"); ok {
		t.Fatal("fired at its instant although this process was never told of it")
	}
	c.Set(t0.Add(30 * time.Second))
	waitFired(t, f, "elsewhere")
	if at, _ := f.when("elsewhere"); !at.Equal(t0.Add(30 * time.Second)) {
		t.Errorf("fired at %v, want at the poll, %v", at, t0.Add(30*time.Second))
	}
}

// TestEngineFiresLateAfterARestart: a timer whose instant passed while no
// process ran fires as soon as one starts.
func TestEngineFiresLateAfterARestart(t *testing.T) {
	c := clock.NewFake(t0)
	path := filepath.Join(t.TempDir(), "bot.db")
	before := open(t, path)
	_, _, err := before.AddTimer(t.Context(), timerAt("missed", t0.Add(time.Minute)), t0)
	require.NoError(t, err)
	require.NoError(t, before.Close())

	c.Set(t0.Add(5 * time.Minute)) // the bot was down
	f := newFired(c)
	e, err := timer.New(open(t, path), map[string]timer.Handler{"test": f}, timer.Options{Clock: c})
	require.NoError(t, err)
	stop := running(t, e, c)
	defer stop()
	waitFired(t, f, "missed")
	if at, _ := f.when("missed"); !at.Equal(t0.Add(5 * time.Minute)) {
		t.Errorf("fired at %v, want at the start, %v", at, t0.Add(5*time.Minute))
	}
}

// hookedStore is a store whose NextTimers calls afterRead, once, after
// its read: what another goroutine does between the engine's reading of
// the store and its setting of the next wake.
type hookedStore struct {
	*sqlite.Store
	mu        sync.Mutex
	afterRead func()
}

func (s *hookedStore) NextTimers(ctx context.Context, now time.Time) ([]meetingbot.Timer, time.Time, int, error) {
	due, next, pending, err := s.Store.NextTimers(ctx, now)
	s.mu.Lock()
	hook := s.afterRead
	s.afterRead = nil
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	return due, next, pending, err
}

// TestEngineWakesForATimerAddedDuringAPass: a timer added after a pass
// read the store, and before the pass set its next wake, still wakes the
// engine: it fires at its instant, not at the poll an hour later.
func TestEngineWakesForATimerAddedDuringAPass(t *testing.T) {
	c := clock.NewFake(t0)
	store := &hookedStore{Store: open(t, filepath.Join(t.TempDir(), "bot.db"))}
	f := newFired(c)
	e, err := timer.New(store, map[string]timer.Handler{"test": f}, timer.Options{Clock: c, Poll: time.Hour})
	require.NoError(t, err)
	_, _, err = store.AddTimer(t.Context(), timerAt("first", t0.Add(time.Minute)), t0)
	require.NoError(t, err)
	stop := running(t, e, c)
	defer stop()

	// The pass that wakes for "first" reads the store; then, before it
	// sleeps again, a click adds "second", due a second later than the
	// wake the engine had.
	second := t0.Add(time.Minute + time.Second)
	added := make(chan error, 1)
	store.mu.Lock()
	store.afterRead = func() {
		_, _, err := e.Add(context.Background(), timerAt("second", second))
		added <- err
	}
	store.mu.Unlock()
	c.Set(t0.Add(time.Minute))
	waitFired(t, f, "first")
	require.NoError(t, <-added, "Add during the pass")

	c.Set(second)
	waitFired(t, f, "second")
	if at, _ := f.when("second"); !at.Equal(second) {
		t.Errorf("second fired at %v, want at its instant %v", at, second)
	}
}

// movedObserver records the timers the engine says ended.
type movedObserver struct {
	mu    sync.Mutex
	ended []meetingbot.Timer
}

func (o *movedObserver) TimerFired(t meetingbot.Timer) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ended = append(o.ended, t)
}
func (o *movedObserver) TimersPending(int) {}

// TestEngineRekeyWakesForTheEarlierInstant: asleep until a wait ten
// minutes ahead, the engine wakes when that wait is re-keyed to a minute
// ahead (its meeting moved earlier) and fires the new key at its instant;
// the old key never fires, and counts as moved.
func TestEngineRekeyWakesForTheEarlierInstant(t *testing.T) {
	c := clock.NewFake(t0)
	store := open(t, filepath.Join(t.TempDir(), "bot.db"))
	f := newFired(c)
	obs := &movedObserver{}
	e, err := timer.New(store, map[string]timer.Handler{"test": f}, timer.Options{Clock: c, Poll: time.Hour, Observer: obs})
	require.NoError(t, err)
	old, _, err := store.AddTimer(t.Context(), timerAt("at-0810", t0.Add(10*time.Minute)), t0)
	require.NoError(t, err)
	stop := running(t, e, c)
	defer stop()

	moved, err := e.Rekey(t.Context(), old, timerAt("at-0801", t0.Add(time.Minute)), "the meeting moved to 08:01")
	require.NoError(t, err)
	require.True(t, moved, "Rekey before its instant")
	asleep(t, c, 1)
	c.Set(t0.Add(time.Minute))
	waitFired(t, f, "at-0801")
	if at, _ := f.when("at-0801"); !at.Equal(t0.Add(time.Minute)) {
		t.Errorf("at-0801 fired at %v, want %v", at, t0.Add(time.Minute))
	}
	c.Set(t0.Add(10 * time.Minute))
	if _, ok := f.when("at-0810"); ok {
		t.Error("the re-keyed timer fired at its old instant")
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.ended) == 0 || obs.ended[0].Key != "at-0810" || obs.ended[0].State != meetingbot.TimerMoved || obs.ended[0].Next != "at-0801" {
		t.Errorf("observed %+v first, want at-0810 moved to at-0801", obs.ended)
	}
}
