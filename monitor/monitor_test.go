package monitor_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/monitor"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	alice = meetingbot.Subscription{ID: "alice@example.com", CalendarID: "alice@example.com", Offsets: []time.Duration{time.Minute}}
	team  = meetingbot.Subscription{ID: "team@example.com=#eng", CalendarID: "team@example.com", Destination: "#eng", Offsets: []time.Duration{time.Minute}}
	t0    = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
)

func start(t *testing.T) (*monitor.Monitor, *clock.Fake, *httptest.Server) {
	t.Helper()
	clk := clock.NewFake(t0)
	m := monitor.New(monitor.Options{Subscriptions: []meetingbot.Subscription{alice, team}, Interval: 10 * time.Second, Now: clk.Now})
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	return m, clk, srv
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestHealth(t *testing.T) {
	m, clk, srv := start(t)
	steps := []struct {
		name       string
		do         func()
		wantStatus int
		wantBody   []string
	}{
		{"fresh start counts as healthy", func() {}, 200, []string{"ok: 2 subscriptions"}},
		{"both sweep", func() {
			clk.Advance(10 * time.Second)
			m.Swept(alice, clk.Now(), time.Second, nil)
			m.Swept(team, clk.Now(), time.Second, nil)
		}, 200, []string{"ok"}},
		{"team fails for three intervals", func() {
			for range 3 {
				clk.Advance(10 * time.Second)
				m.Swept(alice, clk.Now(), time.Second, nil)
				m.Swept(team, clk.Now(), time.Second, errors.New("read calendar team@example.com: 403 rateLimitExceeded"))
			}
		}, 200, []string{"ok"}},
		{"one more interval is too many", func() {
			clk.Advance(10 * time.Second)
			m.Swept(alice, clk.Now(), time.Second, nil)
			m.Swept(team, clk.Now(), time.Second, errors.New("read calendar team@example.com: 500 backendError"))
		}, 503, []string{
			"unhealthy: 1 of 2",
			"subscription team@example.com=#eng: last complete sweep at 2026-11-30T09:00:10Z (40s ago, more than 3 ticks of 10s)",
			"failing since 2026-11-30T09:00:20Z; last error: read calendar team@example.com: 500 backendError",
		}},
		{"recovery", func() {
			m.Swept(team, clk.Now(), time.Second, nil)
		}, 200, []string{"ok"}},
		{"ticks stop altogether", func() { clk.Advance(31 * time.Second) }, 503, []string{
			"unhealthy: 2 of 2",
			"subscription alice@example.com: last complete sweep at 2026-11-30T09:00:50Z (31s ago",
			"no sweep finished since",
		}},
	}
	for _, s := range steps {
		s.do()
		status, body := get(t, srv.URL+"/healthz")
		if status != s.wantStatus {
			t.Errorf("%s: GET /healthz = %d %q, want %d", s.name, status, body, s.wantStatus)
		}
		for _, w := range s.wantBody {
			if !strings.Contains(body, w) {
				t.Errorf("%s: GET /healthz body = %q, want it to contain %q", s.name, body, w)
			}
		}
	}
}

func TestHealthNeverSwept(t *testing.T) {
	_, clk, srv := start(t)
	clk.Advance(time.Minute)
	status, body := get(t, srv.URL+"/healthz")
	assert.Equal(t, 503, status)
	assert.Contains(t, body, "no complete sweep since start-up at 2026-11-30T09:00:00Z")
}

type counter struct{ n int64 }

func (c counter) Count(context.Context) (int64, error) { return c.n, nil }

func TestMetrics(t *testing.T) {
	m, clk, srv := start(t)
	trig := t0.Add(-time.Minute)
	m.Recorded(meetingbot.Entry{Outcome: meetingbot.Sent, TriggerAt: trig, RecordedAt: trig.Add(2 * time.Second)})
	m.Recorded(meetingbot.Entry{Outcome: meetingbot.Sent, Late: true, TriggerAt: trig, RecordedAt: trig.Add(90 * time.Second)})
	m.Recorded(meetingbot.Entry{Outcome: meetingbot.Skipped, Code: meetingbot.ReasonStarted, Reason: "started"})
	m.Recorded(meetingbot.Entry{Outcome: meetingbot.Skipped, Code: meetingbot.ReasonStarted, Reason: "started; an interrupted send was not confirmed"})
	m.Recorded(meetingbot.Entry{Outcome: meetingbot.Skipped, Code: meetingbot.ReasonNoLongerDue, Reason: "meeting no longer due; an interrupted send was not confirmed"})
	m.Recorded(meetingbot.Entry{Outcome: meetingbot.Failed, Code: meetingbot.ReasonPermanent, Reason: "channel_not_found"})
	m.Recorded(meetingbot.Entry{Outcome: meetingbot.Failed, Code: meetingbot.ReasonTransient, Retryable: true, Reason: "timeout"})
	m.Recorded(meetingbot.Entry{Outcome: meetingbot.Failed, Code: meetingbot.ReasonTransient, Retryable: true, Reason: "timeout"})
	m.RecordedAgenda(meetingbot.Entry{Outcome: meetingbot.Sent})
	m.RecordedAgenda(meetingbot.Entry{Outcome: meetingbot.Sent, Late: true})
	m.RecordedAgenda(meetingbot.Entry{Outcome: meetingbot.Skipped, Code: meetingbot.ReasonNoMeetings})
	m.RecordedAgenda(meetingbot.Entry{Outcome: meetingbot.Skipped, Code: meetingbot.ReasonNoMeetings})
	m.RecordedAgenda(meetingbot.Entry{Outcome: meetingbot.Skipped, Code: meetingbot.ReasonAfterNoon})
	m.Ticked(clk.Now(), 30*time.Millisecond, nil)
	m.Ticked(clk.Now(), 3*time.Second, nil)
	m.Swept(alice, clk.Now(), time.Second, nil)
	m.Planned(7)
	m.Planned(5)
	m.Checked(meetingbot.CheckConfirmed)
	m.Checked(meetingbot.CheckConfirmed)
	m.Checked(meetingbot.CheckMoved)
	m.Reading(3)
	m.Edited(meetingbot.Entry{Edit: meetingbot.Edit{Kind: meetingbot.EditMoved, MovedTo: t0.Add(time.Hour), Count: 1}})
	m.Edited(meetingbot.Entry{Edit: meetingbot.Edit{Kind: meetingbot.EditMoved, MovedTo: t0.Add(2 * time.Hour), Count: 2}})
	m.Edited(meetingbot.Entry{Edit: meetingbot.Edit{Kind: meetingbot.EditRestored, Count: 3}})
	m.ObserveQuotaWait("events.list", 1500*time.Millisecond)
	m.ObserveQuotaWait("events.get", 0)
	m.ObserveCalendar("events.list", "ok")
	m.ObserveCalendar("events.list", "rate_limited")
	m.ObserveSlack("chat.postMessage", "ok")
	m.ObserveSlack("chat.postMessage", "ok")
	m.ObserveSlack("chat.postMessage", "server_error")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.TrackLedger(ctx, counter{n: 42}, time.Hour); close(done) }()
	defer func() { cancel(); <-done }()

	status, body := get(t, srv.URL+"/metrics")
	require.Equal(t, 200, status)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	require.NoError(t, err, "parse /metrics")

	value := func(name string, labels ...string) float64 {
		f := families[name]
		if f == nil {
			return -1
		}
	metrics:
		for _, mt := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range mt.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for i := 0; i < len(labels); i += 2 {
				if got[labels[i]] != labels[i+1] {
					continue metrics
				}
			}
			switch {
			case mt.Counter != nil:
				return mt.GetCounter().GetValue()
			case mt.Gauge != nil:
				return mt.GetGauge().GetValue()
			case mt.Histogram != nil:
				return float64(mt.GetHistogram().GetSampleCount())
			}
		}
		return -1
	}
	require.Eventually(t, func() bool {
		_, body := get(t, srv.URL+"/metrics")
		return strings.Contains(body, "meetingbot_ledger_rows 42")
	}, 5*time.Second, 10*time.Millisecond, "ledger rows gauge")

	tests := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"meetingbot_reminders_sent_total", nil, 2},
		{"meetingbot_agendas_total", []string{"outcome", "sent"}, 1},
		{"meetingbot_agendas_total", []string{"outcome", "late"}, 1},
		{"meetingbot_agendas_total", []string{"outcome", "no_meetings"}, 2},
		{"meetingbot_agendas_total", []string{"outcome", "after_noon"}, 1},
		{"meetingbot_agendas_total", []string{"outcome", "failed_permanent"}, 0},
		{"meetingbot_reminders_late_total", nil, 1},
		{"meetingbot_reminders_skipped_total", []string{"reason", "started"}, 2},
		{"meetingbot_reminders_skipped_total", []string{"reason", "no_longer_due"}, 1},
		{"meetingbot_reminders_failed_total", []string{"class", "permanent"}, 1},
		{"meetingbot_reminders_failed_total", []string{"class", "transient"}, 2},
		{"meetingbot_reminder_lateness_seconds", nil, 2},
		{"meetingbot_tick_duration_seconds", nil, 2},
		{"meetingbot_calendar_calls_total", []string{"call", "events.list", "class", "ok"}, 1},
		{"meetingbot_calendar_errors_total", []string{"call", "events.list", "class", "rate_limited"}, 1},
		{"meetingbot_slack_calls_total", []string{"call", "chat.postMessage", "class", "ok"}, 2},
		{"meetingbot_slack_errors_total", []string{"call", "chat.postMessage", "class", "server_error"}, 1},
		{"meetingbot_subscriptions", nil, 2},
		{"meetingbot_sweep_duration_seconds", nil, 1},
		{"meetingbot_timers_armed", nil, 5},
		{"meetingbot_fire_checks_total", []string{"outcome", "confirmed"}, 2},
		{"meetingbot_fire_checks_total", []string{"outcome", "moved"}, 1},
		{"meetingbot_fire_checks_total", []string{"outcome", "cancelled"}, 0},
		{"meetingbot_calendar_reads_in_flight", nil, 3},
		{"meetingbot_reminder_edits_total", []string{"kind", "moved"}, 2},
		{"meetingbot_reminder_edits_total", []string{"kind", "restored"}, 1},
		{"meetingbot_reminder_edits_total", []string{"kind", "cancelled"}, 0},
		{"meetingbot_calendar_quota_wait_seconds_total", []string{"call", "events.list"}, 1.5},
		{"meetingbot_subscription_last_success_timestamp_seconds", []string{"subscription", alice.ID}, float64(t0.Unix())},
	}
	for _, tt := range tests {
		if got := value(tt.name, tt.labels...); got != tt.want {
			t.Errorf("metric %s%v = %v, want %v", tt.name, tt.labels, got, tt.want)
		}
	}
	h := families["meetingbot_reminder_lateness_seconds"].GetMetric()[0].GetHistogram()
	assert.InDelta(t, 92, h.GetSampleSum(), 0.001, "lateness sum: 2s + 90s")
	assert.Contains(t, families, "go_goroutines", "the bot's registry carries the Go runtime metrics")
}

// The public health check says whether the bot is well and how many
// subscriptions fail, never which: calendar IDs and channel names
// ("ceo@example.com=#board-layoffs-2026") are for the private listener.
func TestPublicHealthNamesNothing(t *testing.T) {
	m, clk, private := start(t)
	public := httptest.NewServer(m.PublicHandler())
	t.Cleanup(public.Close)
	if status, body := get(t, public.URL+"/healthz"); status != 200 || body != "ok\n" {
		t.Errorf("public GET /healthz = %d %q, want 200 \"ok\\n\"", status, body)
	}
	for range 4 {
		clk.Advance(10 * time.Second)
		m.Swept(alice, clk.Now(), time.Second, nil)
		m.Swept(team, clk.Now(), time.Second, errors.New("read calendar team@example.com: 403 forbidden"))
	}
	status, body := get(t, public.URL+"/healthz")
	if status != 503 || body != "unhealthy: 1 of 2 subscriptions failing\n" {
		t.Errorf("public GET /healthz = %d %q, want 503 \"unhealthy: 1 of 2 subscriptions failing\\n\"", status, body)
	}
	if status, body := get(t, private.URL+"/healthz"); status != 503 || !strings.Contains(body, "team@example.com=#eng") {
		t.Errorf("private GET /healthz = %d %q, want 503 naming the subscription", status, body)
	}
	if status, _ := get(t, public.URL+"/metrics"); status != 404 {
		t.Errorf("public GET /metrics = %d, want 404: metrics name every subscription", status)
	}
}
