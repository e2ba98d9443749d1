package e2e

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"

	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// TestDashboardAndAlertsUseExportedMetrics runs the bot and reads its
// /metrics: every metric family the Grafana dashboard and the alert rules
// name must be one the bot exports. A Calendar read and a Slack lookup fail
// once, so that the error families, which appear with their first error,
// are there too; a second bot has people's own accounts on, whose
// families come with them.
func TestDashboardAndAlertsUseExportedMetrics(t *testing.T) {
	t.Parallel()
	used := map[string][]string{} // metric name -> where it is used
	for _, e := range dashboardExprs(t) {
		for _, n := range metricNames(e) {
			used[n] = append(used[n], "deploy/grafana/meetingbot.json: "+e)
		}
	}
	for _, e := range alertExprs(t) {
		for _, n := range metricNames(e) {
			used[n] = append(used[n], "deploy/prometheus/alerts.yml: "+e)
		}
	}
	if len(used) < 10 {
		t.Fatalf("found only %d metric names in the dashboard and the alerts: %v", len(used), used)
	}

	w := newWorld(t)
	w.cal.QueueFaults(alice, calendartest.ServerError)
	w.slack.Fail("users.lookupByEmail", "", slacktest.Fault{Status: 500})
	p := start(t, w.dir, w.env())
	addr := p.ready()
	var families map[string]*dto.MetricFamily
	eventually(t, 30*time.Second, "a sweep, a Calendar error and a Slack error in /metrics", func() bool {
		_, body := httpGet("http://" + addr + "/metrics")
		parser := expfmt.NewTextParser(model.UTF8Validation)
		f, err := parser.TextToMetricFamilies(strings.NewReader(body))
		if err != nil {
			return false
		}
		families = f
		return f["meetingbot_subscription_last_success_timestamp_seconds"] != nil &&
			f["meetingbot_calendar_errors_total"] != nil && f["meetingbot_slack_errors_total"] != nil
	})
	// People's own accounts on: meetingbot_connections appears with them.
	w2 := newWorld(t)
	addr2 := freeAddr(t)
	p2 := start(t, w2.dir, w2.connectEnv(httpsFront(t, addr2), addr2))
	p2.ready()
	eventually(t, 30*time.Second, "meetingbot_connections in /metrics", func() bool {
		_, body := httpGet("http://" + addr2 + "/metrics")
		parser := expfmt.NewTextParser(model.UTF8Validation)
		f, err := parser.TextToMetricFamilies(strings.NewReader(body))
		if err != nil || f["meetingbot_connections"] == nil {
			return false
		}
		for n, fam := range f {
			if families[n] == nil {
				families[n] = fam
			}
		}
		return true
	})
	for _, n := range slices.Sorted(func(yield func(string) bool) {
		for n := range used {
			if !yield(n) {
				return
			}
		}
	}) {
		if !exported(families, n) {
			t.Errorf("%s is not a metric the bot exports; used in:\n  %s", n, strings.Join(used[n], "\n  "))
		}
	}
}

// exported reports whether name is a family of fs, or a histogram's
// _bucket, _sum or _count series.
func exported(fs map[string]*dto.MetricFamily, name string) bool {
	if fs[name] != nil {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && fs[base] != nil && fs[base].GetType() == dto.MetricType_HISTOGRAM {
			return true
		}
	}
	return false
}

// dashboardExprs returns the PromQL of every query and variable of the
// dashboard.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../deploy/grafana/meetingbot.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	var exprs []string
	for _, p := range d.Panels {
		for _, q := range p.Targets {
			exprs = append(exprs, q.Expr)
		}
	}
	for _, v := range d.Templating.List {
		// label_values(metric, label) is Grafana's: the metric is its
		// first argument.
		if m := regexp.MustCompile(`^label_values\(([^,]+),`).FindStringSubmatch(v.Definition); m != nil {
			exprs = append(exprs, m[1])
		}
	}
	return exprs
}

// alertExprs returns the expression of every alert rule.
func alertExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../deploy/prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Groups []struct {
			Rules []struct {
				Expr string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	var exprs []string
	for _, g := range r.Groups {
		for _, rule := range g.Rules {
			exprs = append(exprs, rule.Expr)
		}
	}
	return exprs
}

var (
	promString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promRange    = regexp.MustCompile(`\[[^\]]*\]`)
	promGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promIdent    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	promKeywords = []string{"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset", "Inf", "NaN"}
)

// metricNames returns the metric names a PromQL expression selects: its
// identifiers once strings, label matchers, ranges and grouping labels are
// dropped, other than function names and keywords.
func metricNames(expr string) []string {
	s := promString.ReplaceAllString(expr, `""`)
	s = promMatchers.ReplaceAllString(s, " ")
	s = promRange.ReplaceAllString(s, " ")
	s = promGrouping.ReplaceAllString(s, " ")
	var names []string
	for _, loc := range promIdent.FindAllStringIndex(s, -1) {
		name := s[loc[0]:loc[1]]
		if loc[0] > 0 && strings.ContainsAny(s[loc[0]-1:loc[0]], "0123456789.") {
			continue // an exponent or unit of a number: 1e3, 5m
		}
		if strings.HasPrefix(strings.TrimLeft(s[loc[1]:], " \t\n"), "(") || slices.Contains(promKeywords, name) {
			continue // a function or a keyword
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

func TestMetricNames(t *testing.T) {
	for _, tt := range []struct {
		expr string
		want []string
	}{
		{`sum by (class) (rate(meetingbot_reminders_failed_total{instance=~"$instance"}[$__rate_interval])) * 60`, []string{"meetingbot_reminders_failed_total"}},
		{`histogram_quantile(0.99, sum by (job, le) (rate(meetingbot_reminder_lateness_seconds_bucket[10m]))) > 5`, []string{"meetingbot_reminder_lateness_seconds_bucket"}},
		{"(time() - max by (job, subscription) (a_seconds))\n  > on (job) group_left\n3 * max by (job) (b_seconds)", []string{"a_seconds", "b_seconds"}},
		{`(count(x > scalar(3 * max(y{a="b,c"}))) or vector(0))`, []string{"x", "y"}},
		{`absent_over_time(up[5m]) unless 1e3 > bool z`, []string{"up", "z"}},
	} {
		if got := metricNames(tt.expr); !slices.Equal(got, tt.want) {
			t.Errorf("metricNames(%q) = %q, want %q", tt.expr, got, tt.want)
		}
	}
}
