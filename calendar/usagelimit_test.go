package calendar_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

// changes records what QuotaChanged is told.
type quotaLog struct {
	mu  sync.Mutex
	all []calendar.QuotaChange
}

func (c *quotaLog) record(ch calendar.QuotaChange) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.all = append(c.all, ch)
}

func (c *quotaLog) list() []calendar.QuotaChange {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]calendar.QuotaChange(nil), c.all...)
}

// show words a change for a failure message: scope, limit, pace.
func show(chs []calendar.QuotaChange) []string {
	var out []string
	for _, c := range chs {
		out = append(out, fmt.Sprintf("%s %s %d/min", c.Scope, c.Limit, c.PerMinute))
	}
	return out
}

// Every usageLimits answer of Google's "Handle API errors" guide, and the
// real answers that name their quota, is read for what it says: a
// per-minute quota is retried after a backoff and halves the budget of the
// user or of the project it names; the project's daily limit and
// Calendar's usage limits are not retried (they last hours), drop the
// budget of their scope to one call a minute, and the read fails as a
// usage limit, not as a calendar to share, so that the mirror answers from
// its last reading.
func TestUsageLimitAnswers(t *testing.T) {
	perDay := calendartest.Fault{Status: http.StatusForbidden, Domain: "usageLimits", Reason: "rateLimitExceeded",
		Message: "Quota exceeded for quota group 'default' and limit 'Queries per day' of service 'calendar-json.googleapis.com' for consumer 'project_number:123456789012'."}
	tests := []struct {
		name    string
		fault   calendartest.Fault
		retried bool
		want    string // the budget lowered: scope, limit, pace
		say     string // what the error says, when not retried
	}{
		{"429 rateLimitExceeded", calendartest.RateLimited, true, "user per_minute 30/min", ""},
		{"403 rateLimitExceeded", calendartest.RateLimited403, true, "user per_minute 30/min", ""},
		{"403 userRateLimitExceeded", calendartest.UserRateLimited, true, "user per_minute 30/min", ""},
		{"403 rateLimitExceeded, Queries per minute per user", calendartest.UserMinuteLimited, true, "user per_minute 30/min", ""},
		{"403 rateLimitExceeded, Queries per minute", calendartest.ProjectMinuteLimited, true, "project per_minute 300/min", ""},
		{"403 dailyLimitExceeded", calendartest.DailyLimited, false, "project daily 1/min",
			"Google's daily limit of Calendar requests for the project is reached"},
		{"403 rateLimitExceeded, Queries per day", perDay, false, "project daily 1/min",
			"Google's daily limit of Calendar requests for the project is reached"},
		{"403 quotaExceeded", calendartest.UsageLimited, false, "user calendar_usage 1/min",
			"Calendar usage limits exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			put(t, srv, alice, "m1", window[0].Add(time.Hour), time.Hour)
			srv.QueueFaults(alice, tt.fault)
			c := &fakeClock{Fake: clockAt(origin), base: srv.Client().Transport}
			var chs quotaLog
			src, _ := newSource(t, srv, func(cfg *calendar.Config) {
				cfg.ProjectQuota, cfg.UserQuota = 600, 60
				cfg.HTTPClient = &http.Client{Transport: c}
				cfg.Now, cfg.Sleep = c.Now, c.Sleep
				cfg.QuotaChanged = chs.record
			})
			got, err := src.Meetings(context.Background(), sub(alice), window[0], window[1])
			switch {
			case tt.retried && (err != nil || len(got) != 1):
				t.Fatalf("Meetings() after %s = %v, %v; want m1 on the retry", tt.name, ids(got), err)
			case !tt.retried && (err == nil || meetingbot.IsPermanent(err) || !errors.Is(err, meetingbot.ErrUsageLimit)):
				t.Fatalf("Meetings() after %s = %v; want a transient ErrUsageLimit", tt.name, err)
			case !tt.retried && (!strings.Contains(err.Error(), tt.say) || strings.Contains(err.Error(), "share")):
				t.Errorf("Meetings() after %s = %q; want it to say %q, and not to share the calendar", tt.name, err, tt.say)
			}
			wantSent := 1
			if tt.retried {
				wantSent = 2
			}
			if n := len(c.times()); n != wantSent {
				t.Errorf("requests sent = %d, want %d", n, wantSent)
			}
			if got := show(chs.list()); len(got) != 1 || got[0] != tt.want {
				t.Errorf("QuotaChanged = %v, want [%s]", got, tt.want)
			}
			if l := chs.list(); len(l) == 1 && l[0].Reason != tt.fault.Reason {
				t.Errorf("QuotaChanged reason = %q, want %q", l[0].Reason, tt.fault.Reason)
			}
		})
	}
}

// A budget lowered binds what counts against it: the project's, every
// user's calls; one user's, only that user's. With domain-wide delegation
// Bob has a budget of his own, 2 calls a second, as the project has;
// after Google answered Alice's call with the project's per-minute quota,
// the project's halved budget paces Bob too, and after it answered with
// Alice's own, Bob goes at his pace.
func TestUsageLimitLowersTheBudgetOfItsScope(t *testing.T) {
	const bob = "bob@example.com"
	for _, tt := range []struct {
		fault    calendartest.Fault
		min, max time.Duration // from Bob's first call to his fifth
	}{
		{calendartest.ProjectMinuteLimited, 3500 * time.Millisecond, 5 * time.Second},
		{calendartest.UserMinuteLimited, 0, 2500 * time.Millisecond},
	} {
		t.Run(tt.fault.Message, func(t *testing.T) {
			srv := newServer(t)
			put(t, srv, alice, "m1", window[0].Add(time.Hour), time.Hour)
			put(t, srv, bob, "m2", window[0].Add(time.Hour), time.Hour)
			srv.QueueFaults(alice, tt.fault)
			c := &fakeClock{Fake: clockAt(origin), base: srv.Client().Transport}
			src, _ := newSource(t, srv, func(cfg *calendar.Config) {
				cfg.Impersonate = true
				cfg.ProjectQuota, cfg.UserQuota = 120, 120
				cfg.Retry.Base, cfg.Retry.Max = time.Millisecond, time.Millisecond
				cfg.HTTPClient = &http.Client{Transport: c}
				cfg.Now, cfg.Sleep = c.Now, c.Sleep
			})
			if _, err := src.Meetings(context.Background(), sub(alice), window[0], window[1]); err != nil {
				t.Fatal(err)
			}
			var bobs []time.Duration
			for range 5 {
				if _, err := src.Meetings(context.Background(), sub(bob), window[0], window[1]); err != nil {
					t.Fatal(err)
				}
			}
			c.mu.Lock()
			for _, s := range c.sent {
				if s.calendar == bob {
					bobs = append(bobs, s.at)
				}
			}
			c.mu.Unlock()
			if span := bobs[len(bobs)-1] - bobs[0]; span < tt.min || span > tt.max {
				t.Errorf("Bob's 5 calls took %v (at %v), want between %v and %v", span, bobs, tt.min, tt.max)
			}
		})
	}
}

// Plain rate-limit answers ("Rate Limit Exceeded", which names no quota)
// to two users within a minute say the project's quota is short too: its
// budget is halved beside theirs.
func TestPlainRateLimitsOfTwoUsersLowerTheProject(t *testing.T) {
	const bob = "bob@example.com"
	srv := newServer(t)
	put(t, srv, alice, "m1", window[0].Add(time.Hour), time.Hour)
	put(t, srv, bob, "m2", window[0].Add(time.Hour), time.Hour)
	srv.QueueFaults(alice, calendartest.RateLimited)
	srv.QueueFaults(bob, calendartest.RateLimited403)
	c := &fakeClock{Fake: clockAt(origin), base: srv.Client().Transport}
	var chs quotaLog
	src, _ := newSource(t, srv, func(cfg *calendar.Config) {
		cfg.Impersonate = true
		cfg.ProjectQuota, cfg.UserQuota = 600, 60
		cfg.HTTPClient = &http.Client{Transport: c}
		cfg.Now, cfg.Sleep = c.Now, c.Sleep
		cfg.QuotaChanged = chs.record
	})
	for _, cal := range []string{alice, bob} {
		if _, err := src.Meetings(context.Background(), sub(cal), window[0], window[1]); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"user per_minute 30/min", "user per_minute 30/min", "project per_minute 300/min"}
	if got := show(chs.list()); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("QuotaChanged = %v, want %v", got, want)
	}
}
