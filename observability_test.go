package meetingbot_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The dashboard and the alert rules the bot ships. Their metric names are
// checked against the bot's own /metrics in cmd/bot; here, their form: the
// dashboard imports as it is, every alert says where its runbook is, and
// promtool accepts and tests the rules.
const (
	dashboardPath  = "deploy/grafana/meetingbot.json"
	alertsPath     = "deploy/prometheus/alerts.yml"
	alertTestsPath = "deploy/prometheus/alerts_test.yml"
	// runbookBase is where a runbook_url points: the docs of this
	// repository's main branch, whose files are checked out here.
	runbookBase = "https://github.com/meetingbot/meetingbot/blob/main/"
)

// grafanaDashboard is the part of Grafana's dashboard JSON model the test
// reads.
type grafanaDashboard struct {
	Inputs []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		PluginID string `json:"pluginId"`
	} `json:"__inputs"`
	UID           string         `json:"uid"`
	Title         string         `json:"title"`
	SchemaVersion int            `json:"schemaVersion"`
	Panels        []grafanaPanel `json:"panels"`
	Templating    struct {
		List []struct {
			Name       string            `json:"name"`
			Type       string            `json:"type"`
			Datasource grafanaDatasource `json:"datasource"`
			Definition string            `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

type grafanaDatasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type grafanaPanel struct {
	ID         int                      `json:"id"`
	Type       string                   `json:"type"`
	Title      string                   `json:"title"`
	Datasource grafanaDatasource        `json:"datasource"`
	GridPos    struct{ H, W, X, Y int } `json:"gridPos"`
	Targets    []struct {
		Expr       string            `json:"expr"`
		RefID      string            `json:"refId"`
		Datasource grafanaDatasource `json:"datasource"`
	} `json:"targets"`
}

func readDashboard(t *testing.T) grafanaDashboard {
	t.Helper()
	b, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("parse %s: %v", dashboardPath, err)
	}
	return d
}

// TestGrafanaDashboard checks that the dashboard imports as it is: one
// Prometheus data source asked for at import and used by every panel,
// query and variable; unique panel IDs on a grid that does not overlap;
// and, where promtool is installed, every expression valid PromQL.
func TestGrafanaDashboard(t *testing.T) {
	d := readDashboard(t)
	if len(d.Inputs) != 1 || d.Inputs[0].Type != "datasource" || d.Inputs[0].PluginID != "prometheus" {
		t.Fatalf("%s __inputs = %+v, want one Prometheus data source", dashboardPath, d.Inputs)
	}
	ds := grafanaDatasource{Type: "prometheus", UID: "${" + d.Inputs[0].Name + "}"}
	if d.UID == "" || d.Title == "" || d.SchemaVersion == 0 {
		t.Errorf("%s uid %q, title %q, schemaVersion %d: want all set", dashboardPath, d.UID, d.Title, d.SchemaVersion)
	}
	for _, v := range d.Templating.List {
		if v.Type == "query" && v.Datasource != ds {
			t.Errorf("variable %s uses data source %+v, want %+v", v.Name, v.Datasource, ds)
		}
	}
	ids := map[int]bool{}
	cells := map[[2]int]string{}
	var exprs []string
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel %q: id %d used twice", p.Title, p.ID)
		}
		ids[p.ID] = true
		g := p.GridPos
		if g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
			t.Errorf("panel %q: gridPos %+v outside the 24-column grid", p.Title, g)
		}
		for x := g.X; x < g.X+g.W; x++ {
			for y := g.Y; y < g.Y+g.H; y++ {
				if other, ok := cells[[2]int{x, y}]; ok {
					t.Errorf("panel %q overlaps panel %q at (%d,%d)", p.Title, other, x, y)
				}
				cells[[2]int{x, y}] = p.Title
			}
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource != ds || len(p.Targets) == 0 {
			t.Errorf("panel %q: data source %+v and %d queries, want %+v and some", p.Title, p.Datasource, len(p.Targets), ds)
		}
		refs := map[string]bool{}
		for _, q := range p.Targets {
			if q.Datasource != ds || q.Expr == "" || q.RefID == "" || refs[q.RefID] {
				t.Errorf("panel %q: query %q (refId %q, data source %+v): want an expression, a refId of its own and %+v", p.Title, q.Expr, q.RefID, q.Datasource, ds)
			}
			refs[q.RefID] = true
			exprs = append(exprs, q.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if v.Definition != "" {
			exprs = append(exprs, v.Definition)
		}
	}
	promtoolAccepts(t, exprs)
}

// promtoolAccepts has promtool check each dashboard expression, with
// Grafana's variables replaced by what they stand for, as a recording rule.
func promtoolAccepts(t *testing.T, exprs []string) {
	t.Helper()
	promtool := lookPromtool(t)
	if promtool == "" {
		return
	}
	type rule struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []rule
	r := strings.NewReplacer(`$instance`, `.*`, `$__rate_interval`, `5m`)
	for i, e := range exprs {
		if strings.HasPrefix(e, "label_values(") { // a Grafana function, not PromQL
			e = strings.TrimSuffix(strings.TrimPrefix(e, "label_values("), ")")
			e, _, _ = strings.Cut(e, ",")
		}
		rules = append(rules, rule{Record: fmt.Sprintf("dashboard:expr_%d", i), Expr: r.Replace(e)})
	}
	b, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules (the dashboard's expressions): %v\n%s\n%s", err, out, b)
	}
}

// lookPromtool returns promtool's path, or "" (saying so) when it is not
// installed; .ci/run installs it, so CI never skips.
func lookPromtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool is not installed (Debian: apt-get install prometheus): PromQL not checked")
		return ""
	}
	return p
}

// alertRules is the Prometheus rule file format.
type alertRules struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func readAlerts(t *testing.T) alertRules {
	t.Helper()
	b, err := os.ReadFile(alertsPath)
	if err != nil {
		t.Fatal(err)
	}
	var r alertRules
	if err := yaml.Unmarshal(b, &r); err != nil {
		t.Fatalf("parse %s: %v", alertsPath, err)
	}
	return r
}

// TestAlertRules checks each alert: a severity, a summary and a
// description, a runbook and a runbook_url naming a section of the docs
// that exists, and a unit test in alerts_test.yml where it fires; then
// promtool checks the rules and runs their tests.
func TestAlertRules(t *testing.T) {
	rules := readAlerts(t)
	b, err := os.ReadFile(alertTestsPath)
	if err != nil {
		t.Fatal(err)
	}
	var tests struct {
		RuleFiles []string `yaml:"rule_files"`
		Tests     []struct {
			AlertRuleTest []struct {
				Alertname string `yaml:"alertname"`
				ExpAlerts []any  `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	if err := yaml.Unmarshal(b, &tests); err != nil {
		t.Fatalf("parse %s: %v", alertTestsPath, err)
	}
	if !slices.Equal(tests.RuleFiles, []string{filepath.Base(alertsPath)}) {
		t.Errorf("%s rule_files = %v, want [%s]", alertTestsPath, tests.RuleFiles, filepath.Base(alertsPath))
	}
	fires := map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			}
		}
	}
	anchors := map[string][]string{}
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			n++
			if s := r.Labels["severity"]; s != "critical" && s != "warning" {
				t.Errorf("%s: severity %q, want critical or warning", r.Alert, s)
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("%s: want a summary and a description", r.Alert)
			}
			if !fires[r.Alert] {
				t.Errorf("%s: no test in %s where it fires", r.Alert, alertTestsPath)
			}
			url := r.Annotations["runbook_url"]
			// runbook is the name the issue gave, runbook_url Grafana's and
			// Alertmanager's conventions: both, the same link.
			if rb := r.Annotations["runbook"]; rb != url {
				t.Errorf("%s: runbook %q and runbook_url %q, want both, the same", r.Alert, rb, url)
			}
			rest, ok := strings.CutPrefix(url, runbookBase)
			file, frag, _ := strings.Cut(rest, "#")
			if !ok || frag == "" || !strings.HasSuffix(file, ".md") {
				t.Errorf("%s: runbook_url %q, want %s<docs page>#<section>", r.Alert, url, runbookBase)
				continue
			}
			if _, ok := anchors[file]; !ok {
				md, err := os.ReadFile(file)
				if err != nil {
					t.Errorf("%s: runbook_url %q: %v", r.Alert, url, err)
					continue
				}
				anchors[file], _ = scanMarkdown(string(md))
			}
			if !slices.Contains(anchors[file], frag) {
				t.Errorf("%s: runbook_url %q: %s has no heading with the anchor #%s", r.Alert, url, file, frag)
			}
		}
	}
	if n == 0 {
		t.Fatalf("%s has no alerts", alertsPath)
	}
	promtool := lookPromtool(t)
	if promtool == "" {
		return
	}
	if out, err := exec.Command(promtool, "check", "rules", alertsPath).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules %s: %v\n%s", alertsPath, err, out)
	}
	if out, err := exec.Command(promtool, "test", "rules", alertTestsPath).CombinedOutput(); err != nil {
		t.Errorf("promtool test rules %s: %v\n%s", alertTestsPath, err, out)
	}
}
