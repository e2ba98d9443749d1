package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// 400 calendars shared with the service account, synced every 30 s:
// 800 Calendar calls a minute against one user's 600. The bot says so at
// start-up, with the fixes, and on /metrics; with domain-wide delegation
// each calendar has a quota of its own and it says nothing. Either way the
// day's requests pass 80% of Google's daily threshold, which it says too.
func TestStartUpSaysWhenTheQuotaIsShort(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var cals []string
	for i := range 400 {
		cal := fmt.Sprintf("room%d@example.com", i)
		w.cal.AddCalendar(cal)
		cals = append(cals, cal+"=#eng")
	}
	for _, tt := range []struct {
		impersonate string
		warn        bool
		ratio       string
	}{
		{"false", true, "meetingbot_calendar_quota_demand_ratio 1.33"},
		{"true", false, "meetingbot_calendar_quota_demand_ratio 0.08"},
	} {
		env := w.env("CALENDARS="+strings.Join(cals, ","), "TICK_INTERVAL=30s", "REMINDER_OFFSETS=10m", "GOOGLE_IMPERSONATE="+tt.impersonate)
		p := start(t, w.dir, env)
		addr := p.addr()
		var metrics string
		defer func() {
			if t.Failed() {
				t.Logf("demand metric: %s", metricLine(metrics, "meetingbot_calendar_quota_demand_ratio"))
			}
		}()
		eventually(t, 20*time.Second, "/metrics with the demand on the quota", func() bool {
			_, metrics = httpGet("http://" + addr + "/metrics")
			return strings.Contains(metrics, "\n"+tt.ratio)
		})
		line := logLine(p.out.String(), "Calendar calls a minute")
		switch {
		case tt.warn && line == "":
			t.Errorf("GOOGLE_IMPERSONATE=%s: no start-up line on the quota; output:\n%s", tt.impersonate, p.out.String())
		case tt.warn:
			for _, want := range []string{`"level":"WARN"`,
				"the 400 calendars read as one Google user (bot@meetingbot-test.iam.gserviceaccount.com) need about 800 Calendar calls a minute",
				"more than the 600 a minute of CALENDAR_QUOTA_PER_USER_PER_MINUTE", "PUBLIC_URL (push notifications", "GOOGLE_IMPERSONATE=true",
				"people connecting their own calendars", "CALENDAR_RESYNC_INTERVAL=50s (about 480 calls a minute)"} {
				if !strings.Contains(line, want) {
					t.Errorf("start-up line on the quota = %s, want it to say %q", line, want)
				}
			}
		case line != "":
			t.Errorf("GOOGLE_IMPERSONATE=%s: start-up line on the quota %s, want none", tt.impersonate, line)
		}
		// A day of a sync every 30 s of 400 calendars passes Google's daily
		// threshold, whoever reads them: said at start-up with the fixes.
		if !strings.Contains(metrics, "\nmeetingbot_calendar_daily_projection_ratio 1.1556\n") {
			t.Errorf("GOOGLE_IMPERSONATE=%s: /metrics %q, want meetingbot_calendar_daily_projection_ratio 1.1556", tt.impersonate, metricLine(metrics, "meetingbot_calendar_daily_projection_ratio"))
		}
		day := logLine(p.out.String(), "Calendar requests a day")
		for _, want := range []string{`"level":"WARN"`, "about 1,155,600 for 400 calendars", "without push notifications each calendar costs",
			"turn push notifications on with PUBLIC_URL", "CALENDAR_RESYNC_INTERVAL=1m0s"} {
			if !strings.Contains(day, want) {
				t.Errorf("GOOGLE_IMPERSONATE=%s: start-up line on the day's requests = %s, want it to say %q", tt.impersonate, day, want)
			}
		}
		p.signal(syscall.SIGTERM)
		p.wait(15 * time.Second)
	}
}

// metricLine returns the sample line of name in a /metrics page.
func metricLine(page, name string) string {
	for line := range strings.SplitSeq(page, "\n") {
		if strings.HasPrefix(line, name+" ") || strings.HasPrefix(line, name+"{") {
			return line
		}
	}
	return ""
}
