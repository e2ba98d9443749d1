package calendar_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

var window = [2]time.Time{time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}

func TestMeetingsRetriesTransientErrors(t *testing.T) {
	tests := []struct {
		name   string
		faults []calendartest.Fault
		want   []string
	}{
		{"429", []calendartest.Fault{calendartest.RateLimited}, []string{"rate_limited", "ok"}},
		{"403 rateLimitExceeded", []calendartest.Fault{calendartest.RateLimited403}, []string{"rate_limited", "ok"}},
		{"403 userRateLimitExceeded", []calendartest.Fault{calendartest.UserRateLimited}, []string{"rate_limited", "ok"}},
		{"500 then 503", []calendartest.Fault{calendartest.ServerError, calendartest.Unavailable}, []string{"server_error", "server_error", "ok"}},
		{"connection dropped", []calendartest.Fault{calendartest.Drop}, []string{"network", "ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			put(t, srv, alice, "m1", window[0].Add(time.Hour), time.Hour)
			srv.QueueFaults(alice, tt.faults...)
			src, rec := newSource(t, srv, func(c *calendar.Config) { c.Retry.Base = 100 * time.Millisecond })
			got, err := src.Meetings(context.Background(), sub(alice), window[0], window[1])
			if err != nil || !slices.Equal(ids(got), []string{"m1"}) {
				t.Fatalf("Meetings() = %v, %v; want [m1], nil", ids(got), err)
			}
			if n := srv.Requests(alice); n != len(tt.faults)+1 {
				t.Errorf("Requests(%s) = %d, want %d", alice, n, len(tt.faults)+1)
			}
			var want []string
			for _, c := range tt.want {
				want = append(want, "events.list:"+c)
			}
			if got := rec.observed(); !slices.Equal(got, want) {
				t.Errorf("Observe calls = %v, want %v", got, want)
			}
			// Exponential with jitter: retry n waits in [base*2^(n-1)/2, base*2^(n-1)].
			for i, d := range rec.sleeps {
				hi := 100 * time.Millisecond << i
				if d < hi/2 || d > hi {
					t.Errorf("sleep %d = %v, want within [%v, %v]", i+1, d, hi/2, hi)
				}
			}
		})
	}
}

func TestMeetingsHonoursRetryAfter(t *testing.T) {
	srv := newServer(t)
	srv.AddCalendar(alice)
	limited := calendartest.RateLimited
	limited.RetryAfter = "7"
	srv.QueueFaults(alice, limited)
	src, rec := newSource(t, srv, nil)
	if _, err := src.Meetings(context.Background(), sub(alice), window[0], window[1]); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rec.sleeps, []time.Duration{7 * time.Second}) {
		t.Errorf("sleeps = %v, want [7s]", rec.sleeps)
	}
}

func TestMeetingsGivesUpAfterMaxAttempts(t *testing.T) {
	srv := newServer(t)
	srv.AddCalendar(alice)
	srv.QueueFaults(alice, calendartest.ServerError, calendartest.ServerError, calendartest.ServerError, calendartest.ServerError)
	src, _ := newSource(t, srv, func(c *calendar.Config) { c.Retry.MaxAttempts = 3 })
	_, err := src.Meetings(context.Background(), sub(alice), window[0], window[1])
	if err == nil || meetingbot.IsPermanent(err) {
		t.Fatalf("Meetings() error = %v, want a transient error", err)
	}
	if n := srv.Requests(alice); n != 3 {
		t.Errorf("Requests(%s) = %d, want 3", alice, n)
	}
}

func TestMeetingsStopsWithContext(t *testing.T) {
	srv := newServer(t)
	srv.AddCalendar(alice)
	srv.QueueFaults(alice, calendartest.ServerError, calendartest.ServerError)
	ctx, cancel := context.WithCancel(context.Background())
	src, _ := newSource(t, srv, func(c *calendar.Config) {
		c.Sleep = func(context.Context, time.Duration) error { cancel(); return context.Canceled }
	})
	_, err := src.Meetings(ctx, sub(alice), window[0], window[1])
	if !errors.Is(err, context.Canceled) || meetingbot.IsPermanent(err) {
		t.Errorf("Meetings() error = %v, want context.Canceled, not permanent", err)
	}
	if n := srv.Requests(alice); n != 1 {
		t.Errorf("Requests(%s) = %d, want 1", alice, n)
	}
}

func TestMeetingsRetryAfterPastDeadline(t *testing.T) {
	srv := newServer(t)
	srv.AddCalendar(alice)
	limited := calendartest.RateLimited
	limited.RetryAfter = "120"
	srv.QueueFaults(alice, limited)
	src, rec := newSource(t, srv, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := src.Meetings(ctx, sub(alice), window[0], window[1])
	if err == nil || meetingbot.IsPermanent(err) || len(rec.sleeps) != 0 {
		t.Errorf("Meetings() = %v after sleeps %v, want a transient error at once", err, rec.sleeps)
	}
}

func TestMeetingsPermanentErrors(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(*calendartest.Server)
		wantText []string
	}{
		{"404 not shared", func(s *calendartest.Server) { s.Share(alice, "someone@example.com") },
			[]string{"calendar alice@example.com: not found or not shared: share alice@example.com's calendar with bot@meetingbot-test.iam.gserviceaccount.com (See all event details)"}},
		{"404 unknown calendar", func(*calendartest.Server) {},
			[]string{"not found or not shared: share alice@example.com's calendar with bot@meetingbot-test.iam.gserviceaccount.com"}},
		{"403 forbidden", func(s *calendartest.Server) { s.AddCalendar(alice); s.QueueFaults(alice, calendartest.Forbidden) },
			[]string{"calendar alice@example.com: access denied: share alice@example.com's calendar with bot@"}},
		// A 401 gets one more try with a new token first.
		{"401 twice", func(s *calendartest.Server) {
			s.AddCalendar(alice)
			s.QueueFaults(alice, calendartest.Unauthorized, calendartest.Unauthorized)
		},
			[]string{"calendar alice@example.com: credentials rejected: check that the key in GOOGLE_APPLICATION_CREDENTIALS"}},
		{"key refused by the token endpoint", func(s *calendartest.Server) { s.AddCalendar(alice); s.QueueTokenFaults(calendartest.InvalidGrant) },
			[]string{"service account key refused (invalid_grant)", "GOOGLE_APPLICATION_CREDENTIALS"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			tt.setup(srv)
			src, rec := newSource(t, srv, nil)
			_, err := src.Meetings(context.Background(), sub(alice), window[0], window[1])
			if !meetingbot.IsPermanent(err) {
				t.Fatalf("Meetings() error = %v, want a permanent error", err)
			}
			for _, text := range tt.wantText {
				if !strings.Contains(err.Error(), text) {
					t.Errorf("Meetings() error = %q, want it to contain %q", err, text)
				}
			}
			wantRequests := 1
			if tt.name == "401 twice" {
				wantRequests = 2
			}
			if n := srv.Requests(alice); n > wantRequests {
				t.Errorf("Requests(%s) = %d, want at most %d", alice, n, wantRequests)
			}
			got := rec.observed()
			if len(got) != wantRequests || slices.ContainsFunc(got, func(c string) bool { return c != "events.list:permanent" }) {
				t.Errorf("Observe calls = %v, want %d times events.list:permanent", got, wantRequests)
			}
		})
	}
}

// One calendar failing, permanently or not, leaves the others readable,
// also when read concurrently.
func TestMeetingsFailureIsolated(t *testing.T) {
	srv := newServer(t)
	const bob, carol = "bob@example.com", "carol@example.com"
	put(t, srv, alice, "a1", window[0].Add(time.Hour), time.Hour)
	put(t, srv, carol, "c1", window[0].Add(time.Hour), time.Hour)
	srv.QueueFaults(carol, calendartest.ServerError, calendartest.ServerError, calendartest.ServerError)
	src, _ := newSource(t, srv, func(c *calendar.Config) { c.Retry.MaxAttempts = 2 })
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i, cal := range []string{alice, bob, carol} {
		wg.Go(func() { _, errs[i] = src.Meetings(context.Background(), sub(cal), window[0], window[1]) })
	}
	wg.Wait()
	if errs[0] != nil || !meetingbot.IsPermanent(errs[1]) || errs[2] == nil || meetingbot.IsPermanent(errs[2]) {
		t.Fatalf("Meetings(alice, bob, carol) errors = %v, want nil, permanent, transient", errs)
	}
	for _, cal := range []string{alice, carol} {
		got, err := src.Meetings(context.Background(), sub(cal), window[0], window[1])
		if err != nil || len(got) != 1 {
			t.Errorf("Meetings(%s) after the failures = %v, %v; want one meeting", cal, ids(got), err)
		}
	}
}
