package calendar_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/internal/clock"
)

// fakeClock is the quotas' clock: sleeping moves it forward at once, and
// every Calendar API request sent is stamped with its time.
type fakeClock struct {
	*clock.Fake
	mu     sync.Mutex
	sent   []sent
	waited time.Duration
	base   http.RoundTripper
}

type sent struct {
	at       time.Duration // since the clock's origin
	calendar string
}

var origin = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func (c *fakeClock) quotaWait(call string, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waited += d
}

func (c *fakeClock) RoundTrip(r *http.Request) (*http.Response, error) {
	if _, rest, ok := strings.Cut(r.URL.Path, "/calendars/"); ok {
		cal, _, _ := strings.Cut(rest, "/")
		c.mu.Lock()
		c.sent = append(c.sent, sent{c.Now().Sub(origin), cal})
		c.mu.Unlock()
	}
	return c.base.RoundTrip(r)
}

func (c *fakeClock) times() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []time.Duration
	for _, s := range c.sent {
		out = append(out, s.at)
	}
	return out
}

// maxInMinute returns the most requests sent in any minute [t, t+1m).
func maxInMinute(times []time.Duration) int {
	most := 0
	for i, t := range times {
		n := 0
		for _, u := range times[i:] {
			if u < t+time.Minute {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

func TestQuotasSpaceRequests(t *testing.T) {
	const bob = "bob@example.com"
	// every10s is a budget of 6 a minute: a burst of 1, then one every
	// 10s, so never 7 in a minute.
	every10s := func(n int) []time.Duration {
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = time.Duration(i) * 10 * time.Second
		}
		return out
	}
	pairs := func(n int) []time.Duration { // two principals, 6 a minute each
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = time.Duration(i/2) * 10 * time.Second
		}
		return out
	}
	defaults := make([]time.Duration, 14) // 600 a minute less 6: a burst of 9, then 586 a minute
	for i := 9; i < len(defaults); i++ {
		defaults[i] = time.Duration(float64(i-8) * float64(time.Minute) / 586)
	}
	tests := []struct {
		name        string
		project     int
		user        int
		impersonate bool
		calendars   []string // read in turn
		n           int
		want        []time.Duration
		perMinute   int
	}{
		{"one user's budget", 0, 6, false, []string{alice}, 8, every10s(8), 6},
		{"a service account is one user for every calendar", 0, 6, false, []string{alice, bob}, 8, every10s(8), 6},
		{"an impersonated user is the user", 0, 6, true, []string{alice, bob}, 8, pairs(8), 12},
		{"the project's budget binds every user", 6, 600, true, []string{alice, bob}, 8, every10s(8), 6},
		{"defaults", 0, 0, false, []string{alice}, 14, defaults, 600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			for _, cal := range tt.calendars {
				put(t, srv, cal, "m", window[0].Add(time.Hour), time.Hour)
			}
			clock := &fakeClock{Fake: clock.NewFake(origin), base: srv.Client().Transport}
			src, _ := newSource(t, srv, func(c *calendar.Config) {
				c.Impersonate = tt.impersonate
				c.ProjectQuota, c.UserQuota = tt.project, tt.user
				c.HTTPClient = &http.Client{Transport: clock}
				c.Now, c.Sleep, c.QuotaWait = clock.Now, clock.Sleep, clock.quotaWait
			})
			for i := range tt.n {
				cal := tt.calendars[i%len(tt.calendars)]
				var err error
				if i%2 == 0 {
					_, err = src.Meetings(context.Background(), sub(cal), window[0], window[1])
				} else {
					_, err = src.Meeting(context.Background(), sub(cal), "m")
				}
				if err != nil {
					t.Fatalf("read %d of %s: %v", i, cal, err)
				}
			}
			got := clock.times()
			if len(got) != len(tt.want) {
				t.Fatalf("requests sent at %v, want at %v", got, tt.want)
			}
			for i := range got {
				if d := got[i] - tt.want[i]; d < -time.Millisecond || d > time.Millisecond {
					t.Errorf("request %d sent at %v, want %v", i+1, got[i], tt.want[i])
				}
			}
			if n := maxInMinute(got); n > tt.perMinute {
				t.Errorf("%d requests in one minute, want at most %d", n, tt.perMinute)
			}
			if d := clock.waited - got[len(got)-1]; d < -time.Millisecond || d > time.Millisecond {
				t.Errorf("QuotaWait reported %v in all, want %v", clock.waited, got[len(got)-1])
			}
		})
	}
}

// TestQuotaWaitEndsWithContext checks that the only way waiting for the
// quota fails a read is its context ending: no request is sent then.
func TestQuotaWaitEndsWithContext(t *testing.T) {
	srv := newServer(t)
	put(t, srv, alice, "m", window[0].Add(time.Hour), time.Hour)
	clock := &fakeClock{Fake: clock.NewFake(origin), base: srv.Client().Transport}
	var calls []string
	src, _ := newSource(t, srv, func(c *calendar.Config) {
		c.UserQuota = 1
		c.HTTPClient = &http.Client{Transport: clock}
		c.Now, c.Sleep = clock.Now, clock.Sleep
		c.QuotaWait = func(call string, d time.Duration) { calls = append(calls, fmt.Sprint(call, " ", d)) }
	})
	if _, err := src.Meeting(context.Background(), sub(alice), "m"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := src.Meetings(ctx, sub(alice), window[0], window[1])
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "waiting for the quota") {
		t.Errorf("Meetings() with a budget spent and ctx cancelled = %v, want a context.Canceled while waiting for the quota", err)
	}
	if n := len(clock.times()); n != 1 {
		t.Errorf("requests sent = %d, want 1", n)
	}
	if want := []string{"events.get 0s", "events.list 0s"}; fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("QuotaWait calls = %v, want %v", calls, want)
	}
	// The place it gave up is free again: the next read waits one minute.
	if _, err := src.Meetings(context.Background(), sub(alice), window[0], window[1]); err != nil {
		t.Fatal(err)
	}
	if got := clock.times(); got[1] != time.Minute {
		t.Errorf("next request sent at %v, want 1m0s", got[1])
	}
}

// A replica that holds half of the subscriptions spends half of the
// project's quota, and half of the service account's when it reads
// calendars shared with it; a replica's whole share gives it back.
func TestSharedQuotas(t *testing.T) {
	const bob = "bob@example.com"
	for _, tt := range []struct {
		name        string
		project     int
		user        int
		impersonate bool
	}{
		{"the project's budget", 6, 600, true},
		{"the service account's budget", 0, 6, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			for _, cal := range []string{alice, bob} {
				put(t, srv, cal, "m", window[0].Add(time.Hour), time.Hour)
			}
			clock := &fakeClock{Fake: clock.NewFake(origin), base: srv.Client().Transport}
			src, _ := newSource(t, srv, func(c *calendar.Config) {
				c.Impersonate = tt.impersonate
				c.ProjectQuota, c.UserQuota = tt.project, tt.user
				c.HTTPClient = &http.Client{Transport: clock}
				c.Now, c.Sleep, c.QuotaWait = clock.Now, clock.Sleep, clock.quotaWait
			})
			read := func(n int) {
				for i := range n {
					cal := []string{alice, bob}[i%2]
					if _, err := src.Meeting(context.Background(), sub(cal), "m"); err != nil {
						t.Fatalf("read %d of %s: %v", i, cal, err)
					}
				}
			}
			src.ShareQuotas(0.5) // 3 a minute: one, then one every 20 s
			read(4)
			want := []time.Duration{0, 20 * time.Second, 40 * time.Second, 60 * time.Second}
			if got := clock.times(); !slices.Equal(got, want) {
				t.Fatalf("half the quota: requests sent at %v, want at %v", got, want)
			}
			clock.Advance(time.Minute) // the bucket full again
			src.ShareQuotas(1)
			before := len(clock.times())
			read(2)
			got := clock.times()[before:]
			if d := got[1] - got[0]; d != 10*time.Second {
				t.Errorf("the whole quota again: requests %v apart, want 10s (6 a minute)", d)
			}
		})
	}
}
