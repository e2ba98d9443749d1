package monitor_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
)

// The budgets lowered after rate-limit answers show while they are down,
// each halving counted; the demand on the quota shows as a ratio, and so
// does the day's projection against the daily threshold.
func TestQuotaMetrics(t *testing.T) {
	m, _, srv := start(t)
	m.QuotaChanged("user", "bot@x.iam.gserviceaccount.com", 300, 600)
	m.QuotaChanged("user", "bot@x.iam.gserviceaccount.com", 150, 600)
	m.QuotaChanged("user", "alice@example.com", 300, 600)
	m.QuotaChanged("project", "", 5000, 10000)
	m.QuotaChanged("user", "alice@example.com", 600, 600) // grown back
	m.QuotaDemand(3.33)
	m.CalendarDailyProjection(850000, 0.85)

	status, body := get(t, srv.URL+"/metrics")
	require.Equal(t, 200, status)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	require.NoError(t, err)
	value := func(name, scope string) float64 {
		for _, m := range families[name].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "scope" && l.GetValue() == scope {
					if g := m.GetGauge(); g != nil {
						return g.GetValue()
					}
					return m.GetCounter().GetValue()
				}
			}
			if scope == "" {
				return m.GetGauge().GetValue()
			}
		}
		t.Fatalf("%s{scope=%q} missing", name, scope)
		return 0
	}
	for _, c := range []struct {
		name, scope string
		want        float64
	}{
		{"meetingbot_calendar_quota_lowered", "user", 1},
		{"meetingbot_calendar_quota_lowered", "project", 1},
		{"meetingbot_calendar_quota_lowered_total", "user", 3},
		{"meetingbot_calendar_quota_lowered_total", "project", 1},
		{"meetingbot_calendar_quota_demand_ratio", "", 3.33},
		{"meetingbot_calendar_daily_projection_requests", "", 850000},
		{"meetingbot_calendar_daily_projection_ratio", "", 0.85},
	} {
		if got := value(c.name, c.scope); got != c.want {
			t.Errorf("%s{scope=%q} = %v, want %v", c.name, c.scope, got, c.want)
		}
	}
}

// Sweeps from a calendar's last reading are counted by why, and the
// subscriptions on one now.
func TestStaleSweepMetrics(t *testing.T) {
	m, clk, srv := start(t)
	alice := meetingbot.Subscription{ID: "alice@example.com", CalendarID: "alice@example.com"}
	bob := meetingbot.Subscription{ID: "bob@example.com", CalendarID: "bob@example.com"}
	outage := &meetingbot.StaleReading{CalendarID: alice.CalendarID, ReadAt: clk.Now(), Why: meetingbot.StaleUnavailable, Err: errors.New("503")}
	quota := &meetingbot.StaleReading{CalendarID: bob.CalendarID, ReadAt: clk.Now(), Why: meetingbot.StaleQuota, Err: meetingbot.ErrQuotaWait}
	m.Swept(alice, clk.Now(), time.Second, fmt.Errorf("read calendar: %w", outage))
	m.Swept(alice, clk.Now(), time.Second, fmt.Errorf("read calendar: %w", outage))
	m.Swept(bob, clk.Now(), time.Second, fmt.Errorf("read calendar: %w", quota))
	m.Swept(bob, clk.Now(), time.Second, nil)

	_, body := get(t, srv.URL+"/metrics")
	for _, want := range []string{
		`meetingbot_sweeps_from_last_reading_total{why="unavailable"} 2`,
		`meetingbot_sweeps_from_last_reading_total{why="quota"} 1`,
		`meetingbot_subscriptions_on_last_reading{why="unavailable"} 1`,
		`meetingbot_subscriptions_on_last_reading{why="quota"} 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /metrics lacks %q", want)
		}
	}
}
