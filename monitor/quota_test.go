package monitor_test

import (
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// The budgets lowered after rate-limit answers show while they are down,
// each halving counted; the demand on the quota shows as a ratio.
func TestQuotaMetrics(t *testing.T) {
	m, _, srv := start(t)
	m.QuotaChanged("user", "bot@x.iam.gserviceaccount.com", 300, 600)
	m.QuotaChanged("user", "bot@x.iam.gserviceaccount.com", 150, 600)
	m.QuotaChanged("user", "alice@example.com", 300, 600)
	m.QuotaChanged("project", "", 5000, 10000)
	m.QuotaChanged("user", "alice@example.com", 600, 600) // grown back
	m.QuotaDemand(3.33)

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
	} {
		if got := value(c.name, c.scope); got != c.want {
			t.Errorf("%s{scope=%q} = %v, want %v", c.name, c.scope, got, c.want)
		}
	}
}
