package audit_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/audit"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/internal/clock"
)

// syncBuffer is a log destination safe for the Run goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// gauges gathers the audit gauges of sub from reg as
// "missing=N duplicated=N late=N".
func gauges(t *testing.T, reg *prometheus.Registry, sub string) string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "subscription" && l.GetValue() == sub {
					got[strings.TrimPrefix(f.GetName(), "meetingbot_audit_")] = m.GetGauge().GetValue()
				}
			}
		}
	}
	return fmt.Sprintf("missing=%v duplicated=%v late=%v", got["missing"], got["duplicated"], got["late"])
}

func TestWatcherCheck(t *testing.T) {
	e := seedDay(t)
	c := clock.NewFake(at(12, 0, 0))
	logs := &syncBuffer{}
	reg := prometheus.NewRegistry()
	w, err := audit.NewWatcher(audit.WatcherConfig{
		Deps: audit.Deps{
			Subscriptions: []meetingbot.Subscription{team}, Source: e.cal.src, Ledger: e.store, Slack: e.slack,
			Interval: 30 * time.Second, Now: c.Now,
		},
		Window: 4 * time.Hour,
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
	}, reg)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := gauges(t, reg, "team"), "missing=0 duplicated=0 late=0"; got != want {
		t.Errorf("gauges before the first check = %s, want %s", got, want)
	}

	steps := []struct {
		now                time.Time
		missing, dup, late int
		warnings           int // warning lines logged so far
		warning            string
	}{
		// 08:00-12:00: the whole seeded morning.
		{at(12, 0, 0), 3, 1, 1, 1, "missing=3 duplicated=1 late=1"},
		// The same problems a tick later: gauges stay, no new warning.
		{at(12, 0, 20), 3, 1, 1, 1, ""},
		// 08:05-12:05: evt-pending (due 11:59:50) is now missing too.
		{at(12, 5, 0), 4, 1, 1, 2, "missing=4 duplicated=1 late=1"},
		// 09:54-13:54: the duplicate (09:20), the late one (09:50) and
		// evt-down (08:50) left the window.
		{at(13, 54, 0), 3, 0, 0, 3, "missing=3 duplicated=0 late=0"},
		// 12:00-16:00: nothing due, nothing wrong; the gauges go back to 0.
		{at(16, 0, 0), 0, 0, 0, 3, ""},
	}
	for _, s := range steps {
		c.Set(s.now)
		if _, err := w.Check(context.Background()); err != nil {
			t.Fatalf("Check() at %s = %v", s.now.Format("15:04"), err)
		}
		if got, want := gauges(t, reg, "team"), fmt.Sprintf("missing=%d duplicated=%d late=%d", s.missing, s.dup, s.late); got != want {
			t.Errorf("gauges after Check() at %s = %s, want %s", s.now.Format("15:04"), got, want)
		}
		out := logs.String()
		if n := strings.Count(out, "level=WARN"); n != s.warnings {
			t.Errorf("Check() at %s: %d warnings logged, want %d:\n%s", s.now.Format("15:04"), n, s.warnings, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if last := lines[len(lines)-1]; s.warning != "" && !strings.Contains(last, s.warning) {
			t.Errorf("Check() at %s logged %q, want it to contain %q", s.now.Format("15:04"), last, s.warning)
		}
	}
	if out := logs.String(); !strings.Contains(out, "subscription=team") || !strings.Contains(out, "evt-dup:10m:2026-03-02T09:30:00Z") {
		t.Errorf("Check() warning does not name the subscription and the key:\n%s", out)
	}

	if _, err := audit.NewWatcher(audit.WatcherConfig{Deps: audit.Deps{Source: e.cal.src, Ledger: e.store}}, reg); err == nil {
		t.Errorf("NewWatcher() on a registry that has the gauges = nil error, want one")
	}
}

func TestWatcherRun(t *testing.T) {
	e := seedDay(t)
	reg := prometheus.NewRegistry()
	w, err := audit.NewWatcher(audit.WatcherConfig{
		Deps: audit.Deps{
			Subscriptions: []meetingbot.Subscription{team}, Source: e.cal.src, Ledger: e.store, Slack: e.slack,
			Now: func() time.Time { return at(12, 0, 0) },
		},
		Every: 10 * time.Millisecond, Window: 4 * time.Hour,
	}, reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		w.Run(ctx)
		close(done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for gauges(t, reg, "team") != "missing=3 duplicated=1 late=1" {
		if time.Now().After(deadline) {
			t.Fatal("Run() did not set the gauges within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run() did not return within 5s of its context ending")
	}
}

// TestWatcherStoppedMidCheckLogsNothing stops the watcher while it waits
// for a slow calendar: the check ends with the context's error and logs no
// warning, for a deploy is not a failure.
func TestWatcherStoppedMidCheckLogsNothing(t *testing.T) {
	e := seedDay(t)
	e.cal.srv.QueueFaults(team.CalendarID, calendartest.Fault{Delay: 5 * time.Second})
	logs := &syncBuffer{}
	w, err := audit.NewWatcher(audit.WatcherConfig{
		Deps: audit.Deps{
			Subscriptions: []meetingbot.Subscription{team}, Source: e.cal.src, Ledger: e.store, Slack: e.slack,
			Now: func() time.Time { return at(12, 0, 0) },
		},
		Window: 4 * time.Hour,
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
	}, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, stop)
	if _, err := w.Check(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Check() stopped mid-read = %v, want context.Canceled", err)
	}
	if out := logs.String(); out != "" {
		t.Errorf("Check() stopped mid-read logged:\n%s\nwant nothing", out)
	}
}

// The checks' reads of Slack history wait for the pace: three checks of
// one subscription at one read per 200ms take at least 400ms (a lower
// bound, whatever the machine), and each still reads Slack.
func TestWatcherPacesItsSlackReads(t *testing.T) {
	e := seedDay(t)
	w, err := audit.NewWatcher(audit.WatcherConfig{
		Deps: audit.Deps{
			Subscriptions: []meetingbot.Subscription{team}, Source: e.cal.src, Ledger: e.store, Slack: e.slack,
			Interval: 30 * time.Second, Now: func() time.Time { return at(12, 0, 0) },
		},
		SlackPace: rate.NewLimiter(rate.Every(200*time.Millisecond), 1),
	}, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	before := len(e.srv.CallsTo("conversations.history"))
	began := time.Now()
	for range 3 {
		r, err := w.Check(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if s := r.Subscriptions[0]; s.CountedFrom != audit.FromSlack {
			t.Fatalf("counted from %q (%s), want Slack", s.CountedFrom, s.SlackError)
		}
	}
	if took := time.Since(began); took < 400*time.Millisecond {
		t.Errorf("3 checks at one Slack read per 200ms took %v, want at least 400ms", took)
	}
	if n := len(e.srv.CallsTo("conversations.history")) - before; n < 3 {
		t.Errorf("conversations.history calls = %d, want at least 3", n)
	}
}

// A check that comes longer than Window after the last one began reaches
// back to the last one's window, so that nothing between them goes
// unchecked; one within Window looks back Window.
func TestWatcherCoversAGapBetweenChecks(t *testing.T) {
	e := seedDay(t)
	c := clock.NewFake(at(12, 0, 0))
	w, err := audit.NewWatcher(audit.WatcherConfig{
		Deps: audit.Deps{
			Subscriptions: []meetingbot.Subscription{team}, Source: e.cal.src, Ledger: e.store, Slack: e.slack,
			Interval: 30 * time.Second, Now: c.Now,
		},
		Window: time.Hour,
	}, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct{ now, from time.Time }{
		{at(12, 0, 0), at(11, 0, 0)},
		{at(16, 0, 0), at(11, 0, 0)}, // 4 hours later: back to the 12:00 check's window
		{at(16, 5, 0), at(15, 5, 0)},
	} {
		c.Set(s.now)
		r, err := w.Check(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !r.From.Equal(s.from) {
			t.Errorf("Check() at %s covers from %s, want %s", s.now.Format("15:04"), r.From.Format("15:04"), s.from.Format("15:04"))
		}
	}
}
