package calendar_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/internal/clock"
)

func clockAt(t time.Time) *clock.Fake { return clock.NewFake(t) }

// calendarOf returns the calendar an API request reads, "" for another
// request (the token endpoint's).
func calendarOf(r *http.Request) string {
	_, rest, ok := strings.Cut(r.URL.Path, "/calendars/")
	if !ok {
		return ""
	}
	cal, _, _ := strings.Cut(rest, "/")
	return cal
}

// gate is the quotas' clock for requests waiting together: Sleep blocks
// until the test moves the clock past its end.
type gate struct {
	mu       sync.Mutex
	now      time.Time
	sleepers []chan time.Time
	ends     []time.Time
	waiting  chan struct{} // a send on each Sleep that starts
}

func newGate() *gate { return &gate{now: origin, waiting: make(chan struct{}, 100)} }

func (g *gate) Now() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.now
}

func (g *gate) Sleep(ctx context.Context, d time.Duration) error {
	g.mu.Lock()
	ch := make(chan time.Time, 1)
	g.sleepers, g.ends = append(g.sleepers, ch), append(g.ends, g.now.Add(d))
	g.mu.Unlock()
	g.waiting <- struct{}{}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// advance moves the clock d forward and wakes the sleepers whose end it
// passed.
func (g *gate) advance(d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.now = g.now.Add(d)
	for i := 0; i < len(g.sleepers); i++ {
		if !g.ends[i].After(g.now) {
			g.sleepers[i] <- g.now
			g.sleepers = append(g.sleepers[:i], g.sleepers[i+1:]...)
			g.ends = append(g.ends[:i], g.ends[i+1:]...)
			i--
		}
	}
}

// sentOrder records the calendars of the API requests, in order.
type sentOrder struct {
	mu   sync.Mutex
	cals []string
	base http.RoundTripper
}

func (s *sentOrder) RoundTrip(r *http.Request) (*http.Response, error) {
	if cal := calendarOf(r); cal != "" {
		s.mu.Lock()
		s.cals = append(s.cals, cal)
		s.mu.Unlock()
	}
	return s.base.RoundTrip(r)
}

func (s *sentOrder) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.cals...)
}

// When more calls want the quota than it gives, the one needed soonest
// goes first, whatever the order they came in: a reminder's check before
// a routine resync, and a call that says nothing last.
func TestQuotaServesTheMostUrgentFirst(t *testing.T) {
	srv := newServer(t)
	cals := []string{"a@example.com", "soon@example.com", "later@example.com", "whenever@example.com"}
	for _, cal := range cals {
		put(t, srv, cal, "m", window[0].Add(time.Hour), time.Hour)
	}
	g := newGate()
	sent := &sentOrder{base: srv.Client().Transport}
	src, _ := newSource(t, srv, func(c *calendar.Config) {
		c.UserQuota = 1 // a burst of 1, then one a minute
		c.HTTPClient = &http.Client{Transport: sent}
		c.Now, c.Sleep = g.Now, g.Sleep
	})
	if _, err := src.Meetings(context.Background(), sub(cals[0]), window[0], window[1]); err != nil {
		t.Fatal(err)
	}
	read := func(cal string, ctx context.Context, done *sync.WaitGroup) {
		done.Go(func() {
			if _, err := src.Meetings(ctx, sub(cal), window[0], window[1]); err != nil {
				t.Errorf("read of %s: %v", cal, err)
			}
		})
	}
	var done sync.WaitGroup
	bg := context.Background()
	read("later@example.com", meetingbot.WithUrgency(bg, origin.Add(3*time.Minute)), &done)
	<-g.waiting // first in the queue, waiting for the next place
	read("soon@example.com", meetingbot.WithUrgency(bg, origin.Add(time.Minute)), &done)
	<-g.waiting // first now: it is needed sooner
	read("whenever@example.com", bg, &done)
	for i := range 3 {
		g.advance(time.Minute)
		for deadline := time.Now().Add(10 * time.Second); len(sent.list()) < i+2 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond) // the request granted is sent before the next place frees
		}
		if i < 2 {
			<-g.waiting // the next first waits for the next place
		}
	}
	done.Wait()
	want := []string{"a@example.com", "soon@example.com", "later@example.com", "whenever@example.com"}
	if got := sent.list(); len(got) != len(want) || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Errorf("requests sent for %v, want %v", got, want)
	}
}

// A call that could not get its place in the quota before its deadline
// fails at once, sends nothing and spends nothing: its caller answers
// from its last reading, and the next call has the place.
func TestQuotaRefusesACallItCannotServeInTime(t *testing.T) {
	srv := newServer(t)
	put(t, srv, alice, "m", window[0].Add(time.Hour), time.Hour)
	c := &fakeClock{Fake: clockAt(origin), base: srv.Client().Transport}
	src, _ := newSource(t, srv, func(cfg *calendar.Config) {
		cfg.UserQuota = 6 // one every 10s after a burst of 1
		cfg.HTTPClient = &http.Client{Transport: c}
		cfg.Now, cfg.Sleep = c.Now, c.Sleep
	})
	if _, err := src.Meetings(context.Background(), sub(alice), window[0], window[1]); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	began := time.Now()
	_, err := src.Meetings(ctx, sub(alice), window[0], window[1])
	if !errors.Is(err, meetingbot.ErrQuotaWait) {
		t.Errorf("Meetings() needed in 5s with the next place 10s away = %v, want ErrQuotaWait", err)
	}
	if took := time.Since(began); took > 4*time.Second {
		t.Errorf("Meetings() refused after %v, want at once", took)
	}
	if n := len(c.times()); n != 1 {
		t.Errorf("requests sent = %d, want 1", n)
	}
	if _, err := src.Meetings(context.Background(), sub(alice), window[0], window[1]); err != nil {
		t.Fatal(err)
	}
	if got := c.times(); len(got) != 2 || got[1] != 10*time.Second {
		t.Errorf("requests sent at %v, want the second at 10s: the refused call spent nothing", got)
	}
}

// A 429 says the budget is more than Google gives now: the client halves
// its pace for the user answered, says so, and grows it back by a
// quarter a minute once the answers stop.
func TestRateLimitAnswerLowersTheBudgetUntilItRecovers(t *testing.T) {
	srv := newServer(t)
	put(t, srv, alice, "m", window[0].Add(time.Hour), time.Hour)
	c := &fakeClock{Fake: clockAt(origin), base: srv.Client().Transport}
	type change struct {
		scope     string
		perMinute int
	}
	var changes []change
	src, _ := newSource(t, srv, func(cfg *calendar.Config) {
		cfg.UserQuota = 60 // one a second
		cfg.HTTPClient = &http.Client{Transport: c}
		cfg.Now, cfg.Sleep = c.Now, c.Sleep
		cfg.QuotaChanged = func(c calendar.QuotaChange) {
			changes = append(changes, change{c.Scope, c.PerMinute})
		}
	})
	srv.QueueFaults(alice, calendartest.RateLimited)
	for range 4 {
		if _, err := src.Meetings(context.Background(), sub(alice), window[0], window[1]); err != nil {
			t.Fatal(err)
		}
	}
	got := c.times() // the 429, its retry, then three more
	if len(got) != 5 {
		t.Fatalf("requests sent at %v, want 5", got)
	}
	for i := 2; i < len(got); i++ {
		if gap := got[i] - got[i-1]; gap < 2*time.Second-time.Millisecond {
			t.Errorf("request %d sent %v after the one before, want at least 2s: 30 a minute after the 429", i+1, gap)
		}
	}
	if len(changes) != 1 || changes[0] != (change{"user", 30}) {
		t.Errorf("QuotaChanged = %v, want the user's budget lowered to 30 a minute", changes)
	}
	c.Advance(time.Minute)
	if _, err := src.Meetings(context.Background(), sub(alice), window[0], window[1]); err != nil {
		t.Fatal(err)
	}
	if len(changes) != 2 || changes[1] != (change{"user", 45}) {
		t.Errorf("QuotaChanged after a minute without a rate limit = %v, want the budget grown back to 45 a minute", changes)
	}
}
