package cost

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/internal/retry"
	"github.com/meetingbot/meetingbot/monitor"
)

// gauge returns the value of the gauge name on mon's /metrics.
func gauge(t *testing.T, mon *monitor.Monitor, name string) float64 {
	t.Helper()
	families, err := mon.Registerer().(prometheus.Gatherer).Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("%s missing", name)
	return 0
}

// syncedBuffer is a log output written by several goroutines.
type syncedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncedBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncedBuffer) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := strings.TrimSpace(s.b.String())
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

func calendarIDs(n int) func(context.Context) ([]string, error) {
	return func(context.Context) ([]string, error) {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("room%d@example.com", i)
		}
		return ids, nil
	}
}

// At start-up the day is projected from the configuration: a sync of
// each calendar per resync, the checks before reminders (8 meetings a day,
// one per offset), a full sync, and with push the notifications' syncs and
// the channels' upkeep. Without push the line names what each calendar
// costs and what it would with push; past 80% of the threshold it warns,
// with the fixes that apply.
func TestDailyProjectionFromTheConfiguration(t *testing.T) {
	noPush := config.Config{TickInterval: 30 * time.Second, ResyncInterval: 30 * time.Second, Offsets: []time.Duration{10 * time.Minute}, CalendarDailyThreshold: 1_000_000}
	push := noPush
	push.PublicURL, push.ResyncInterval = "https://bot.example.com", 5*time.Minute
	small := push
	small.CalendarDailyThreshold = 100_000
	tests := []struct {
		name      string
		cfg       config.Config
		calendars int
		requests  float64 // the gauge, rounded
		level     string
		say       []string
		not       []string
	}{
		{"3 calendars without push", noPush, 3, 8667, "INFO", []string{
			"about 8,667 for 3 calendars (2,889 each: 2,880 resyncs, 8 checks before reminders, 1 full sync)",
			"without push notifications each calendar costs a sync every CALENDAR_RESYNC_INTERVAL (30s), where with PUBLIC_URL it would cost about 61 a day",
			"0.9% of CALENDAR_DAILY_REQUEST_THRESHOLD (1,000,000)",
		}, []string{"Fixes"}},
		{"400 calendars without push", noPush, 400, 1_155_600, "WARN", []string{
			"about 1,155,600 for 400 calendars", "115.6% of CALENDAR_DAILY_REQUEST_THRESHOLD",
			"Fixes: turn push notifications on with PUBLIC_URL", "about 24,515 requests a day for 400 calendars",
			"CALENDAR_RESYNC_INTERVAL=1m0s (about 579,600 a day", "GOOGLE_IMPERSONATE=true or people connecting their own accounts",
		}, nil},
		{"400 calendars with push", push, 400, 120_515, "INFO", []string{
			"about 120,515 for 400 calendars (301 each: 288 resyncs, 8 checks before reminders, 1 full sync, 4 syncs on notifications, 0.29 channel renewals and stops)",
			"12.1% of CALENDAR_DAILY_REQUEST_THRESHOLD",
		}, []string{"without push", "Fixes"}},
		{"300 calendars with push, a threshold of 100,000", small, 300, 90_386, "WARN", []string{
			"90.4% of CALENDAR_DAILY_REQUEST_THRESHOLD (100,000)", "CALENDAR_RESYNC_INTERVAL=6m0s",
		}, []string{"turn push notifications on"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out syncedBuffer
			mon := monitor.New(monitor.Options{})
			s := NewSpend(tt.cfg, clock.NewFake(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)), mon, slog.New(slog.NewJSONHandler(&out, nil)))
			s.StartUp(t.Context(), calendarIDs(tt.calendars))
			if got := gauge(t, mon, "meetingbot_calendar_daily_projection_requests"); got < tt.requests-1 || got > tt.requests+1 {
				t.Errorf("meetingbot_calendar_daily_projection_requests = %.1f, want %.0f", got, tt.requests)
			}
			if got, want := gauge(t, mon, "meetingbot_calendar_daily_projection_ratio"), tt.requests/float64(tt.cfg.CalendarDailyThreshold); got < want-0.001 || got > want+0.001 {
				t.Errorf("meetingbot_calendar_daily_projection_ratio = %.4f, want %.4f", got, want)
			}
			lines := out.lines()
			if len(lines) != 1 {
				t.Fatalf("log = %q, want one line", lines)
			}
			if !strings.Contains(lines[0], `"level":"`+tt.level+`"`) {
				t.Errorf("line = %s, want level %s", lines[0], tt.level)
			}
			for _, want := range tt.say {
				if !strings.Contains(lines[0], want) {
					t.Errorf("line = %s\nwant it to say %q", lines[0], want)
				}
			}
			for _, not := range tt.not {
				if strings.Contains(lines[0], not) {
					t.Errorf("line = %s\nwant it not to say %q", lines[0], not)
				}
			}
		})
	}
}

// Every hour the day is projected again from the Calendar requests made:
// the last hour's or the average since start, whichever is more, times a
// day. A busy hour past 80% of the threshold warns once, with the fixes;
// the next projection under it says so; a quiet hour after a busy one
// keeps the average.
func TestDailyProjectionEveryHour(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
	cfg := config.Config{TickInterval: 30 * time.Second, ResyncInterval: 5 * time.Minute, PublicURL: "https://bot.example.com",
		Offsets: []time.Duration{10 * time.Minute}, CalendarDailyThreshold: 10_000}
	var out syncedBuffer
	mon := monitor.New(monitor.Options{})
	s := NewSpend(cfg, clk, mon, slog.New(slog.NewJSONHandler(&out, nil)))
	var observed []string
	observe := s.Observe(func(call string, class retry.Class) { observed = append(observed, call) })
	s.StartUp(t.Context(), calendarIDs(2))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx, calendarIDs(2))
	}()
	defer func() {
		cancel()
		<-done
	}()
	for clk.Pending() == 0 {
		time.Sleep(time.Millisecond) // run arms its first hour
	}
	for _, tt := range []struct {
		calls    int
		requests float64
		level    string
		say      string
	}{
		{50, 1200, "INFO", "about 1,200 (50 in the last 1h0m0s, 50 in 1h0m0s since start), 12.0% of CALENDAR_DAILY_REQUEST_THRESHOLD (10,000)"},
		{500, 12000, "WARN", "about 12,000 (500 in the last 1h0m0s, 550 in 2h0m0s since start), 120.0% of CALENDAR_DAILY_REQUEST_THRESHOLD (10,000): past 80%"},
		{520, 12480, "INFO", "about 12,480 (520 in the last 1h0m0s, 1070 in 3h0m0s since start), 124.8%"},
		{10, 6480, "INFO", "about 6,480 (10 in the last 1h0m0s, 1080 in 4h0m0s since start), 64.8% of CALENDAR_DAILY_REQUEST_THRESHOLD (10,000): back under 80%"},
	} {
		for range tt.calls {
			observe("events.list", retry.OK)
		}
		before := len(out.lines())
		clk.Advance(time.Hour)
		if got := gauge(t, mon, "meetingbot_calendar_daily_projection_requests"); got != tt.requests {
			t.Errorf("after %d calls in an hour: meetingbot_calendar_daily_projection_requests = %v, want %v", tt.calls, got, tt.requests)
		}
		lines := out.lines()
		if len(lines) != before+1 {
			t.Fatalf("after %d calls in an hour: log %q, want one more line", tt.calls, lines[before:])
		}
		if line := lines[len(lines)-1]; !strings.Contains(line, `"level":"`+tt.level+`"`) || !strings.Contains(line, tt.say) {
			t.Errorf("after %d calls in an hour: line = %s\nwant %s saying %q", tt.calls, line, tt.level, tt.say)
		}
	}
	if len(observed) != 1080 {
		t.Errorf("calls passed on to the metrics = %d, want 1080", len(observed))
	}
	if w := strings.Count(strings.Join(out.lines(), "\n"), `"level":"WARN"`); w != 1 {
		t.Errorf("WARN lines = %d, want 1", w)
	}
}
