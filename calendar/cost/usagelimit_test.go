package cost

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/monitor"
)

// The log says what Google's usage-limit answer means and its fix once,
// when a first budget is lowered for that limit (not at each halving, nor
// for each user), and once again when every budget lowered for it is back
// at its quota's pace; each limit names its own fix.
func TestUsageLimitsAreSaidOnce(t *testing.T) {
	const sa = "bot@x.iam.gserviceaccount.com"
	cfg := config.Config{ResyncInterval: 30 * time.Second, CalendarQuota: 10000, CalendarUserQuota: 600, CredentialsJSON: []byte("{}")}
	lower := func(scope, who string, n, conf int, l calendar.Limit, reason string) calendar.QuotaChange {
		return calendar.QuotaChange{Scope: scope, Principal: who, PerMinute: n, Configured: conf, Limit: l, Reason: reason}
	}
	grow := func(scope, who string, n, conf int) calendar.QuotaChange {
		return calendar.QuotaChange{Scope: scope, Principal: who, PerMinute: n, Configured: conf}
	}
	tests := []struct {
		name    string
		changes []calendar.QuotaChange
		want    []string // each line's start and what it must say, "|"-separated
	}{
		{"a daily limit, then the day resets", []calendar.QuotaChange{
			lower("project", "", 1, 10000, calendar.LimitDaily, "dailyLimitExceeded"),
			lower("project", "", 1, 10000, calendar.LimitDaily, "dailyLimitExceeded"),
			grow("project", "", 2501, 10000), grow("project", "", 5001, 10000), grow("project", "", 10000, 10000),
		}, []string{
			`WARN|Google's daily limit of Calendar requests for the project is reached|midnight Pacific time|last reading|PUBLIC_URL (push notifications|a longer CALENDAR_RESYNC_INTERVAL (now 30s, at most 1h0m0s)|people connecting their own accounts`,
			`INFO|Calendar calls back at their quota's pace|"limit":"daily"`,
		}},
		{"per-minute halvings of two users", []calendar.QuotaChange{
			lower("user", sa, 300, 600, calendar.LimitPerMinute, "rateLimitExceeded"),
			lower("user", sa, 150, 600, calendar.LimitPerMinute, "rateLimitExceeded"),
			lower("user", "alice@example.com", 300, 600, calendar.LimitPerMinute, "userRateLimitExceeded"),
			grow("user", sa, 600, 600),
			grow("user", "alice@example.com", 450, 600),
			grow("user", "alice@example.com", 600, 600),
		}, []string{
			`WARN|Google answered a rate limit|CALENDAR_QUOTA_PER_USER_PER_MINUTE is more than the project's quota|GOOGLE_IMPERSONATE=true|people connecting their own accounts`,
			`INFO|Calendar calls back at their quota's pace|"limit":"per_minute"`,
		}},
		{"Calendar's usage limits of one user", []calendar.QuotaChange{
			lower("user", sa, 1, 600, calendar.LimitCalendarUsage, "quotaExceeded"),
		}, []string{
			`WARN|Google's Calendar usage limits are exceeded for ` + sa + `|GOOGLE_IMPERSONATE=true|people connecting their own accounts`,
		}},
		{"a daily limit after a per-minute one", []calendar.QuotaChange{
			lower("project", "", 5000, 10000, calendar.LimitPerMinute, "rateLimitExceeded"),
			lower("project", "", 1, 10000, calendar.LimitDaily, "dailyLimitExceeded"),
		}, []string{
			`WARN|Google answered a rate limit|CALENDAR_QUOTA_PER_MINUTE`,
			`WARN|Google's daily limit of Calendar requests`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			u := NewUsageLimits(cfg, monitor.New(monitor.Options{}), slog.New(slog.NewJSONHandler(&out, nil)))
			for _, c := range tt.changes {
				u.Changed(c)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("log = %d lines, want %d:\n%s", len(lines), len(tt.want), out.String())
			}
			for i, want := range tt.want {
				parts := strings.Split(want, "|")
				if !strings.Contains(lines[i], `"level":"`+parts[0]+`"`) {
					t.Errorf("line %d = %s, want level %s", i+1, lines[i], parts[0])
				}
				for _, p := range parts[1:] {
					if !strings.Contains(lines[i], p) {
						t.Errorf("line %d = %s, want it to say %q", i+1, lines[i], p)
					}
				}
			}
		})
	}
}
