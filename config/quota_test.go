package config_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot/config"
)

// The Calendar quotas are the project's: Google's published defaults
// unless the operator says otherwise.
func TestCalendarQuotas(t *testing.T) {
	for _, tt := range []struct {
		env                  []string
		project, user, daily int
	}{
		{nil, 10000, 600, 1000000},
		{[]string{"CALENDAR_QUOTA_PER_MINUTE=20000", "CALENDAR_QUOTA_PER_USER_PER_MINUTE=300"}, 20000, 300, 1000000},
		{[]string{"CALENDAR_QUOTA_PER_MINUTE=12_000"}, 12000, 600, 1000000},
		{[]string{"CALENDAR_DAILY_REQUEST_THRESHOLD=250000"}, 10000, 600, 250000},
		{[]string{"CALENDAR_DAILY_REQUEST_THRESHOLD=1_000_000"}, 10000, 600, 1000000},
	} {
		c, err := config.Parse(prod(tt.env...))
		require.NoError(t, err, "Parse(%v)", tt.env)
		assert.Equal(t, tt.project, c.CalendarQuota, "CalendarQuota of %v", tt.env)
		assert.Equal(t, tt.user, c.CalendarUserQuota, "CalendarUserQuota of %v", tt.env)
		assert.Equal(t, tt.daily, c.CalendarDailyThreshold, "CalendarDailyThreshold of %v", tt.env)
	}
}

// A quota that is not a number of requests a minute stops start-up with
// one line naming the variable, what is wrong and an example.
func TestCalendarQuotasRefused(t *testing.T) {
	for _, tt := range []struct {
		env, want string
	}{
		{"CALENDAR_QUOTA_PER_MINUTE=lots", `CALENDAR_QUOTA_PER_MINUTE="lots": not a whole number of requests a minute, e.g. CALENDAR_QUOTA_PER_MINUTE=10000`},
		{"CALENDAR_QUOTA_PER_MINUTE=0", `CALENDAR_QUOTA_PER_MINUTE="0": must be at least 1 request a minute, e.g. CALENDAR_QUOTA_PER_MINUTE=10000`},
		{"CALENDAR_QUOTA_PER_USER_PER_MINUTE=600/min", `CALENDAR_QUOTA_PER_USER_PER_MINUTE="600/min": not a whole number of requests a minute, e.g. CALENDAR_QUOTA_PER_USER_PER_MINUTE=600`},
		{"CALENDAR_QUOTA_PER_USER_PER_MINUTE=-5", `CALENDAR_QUOTA_PER_USER_PER_MINUTE="-5": must be at least 1 request a minute`},
		{"CALENDAR_QUOTA_PER_USER_PER_MINUTE=60000000", `CALENDAR_QUOTA_PER_USER_PER_MINUTE="60000000": must be at most 1000000 requests a minute`},
		{"CALENDAR_DAILY_REQUEST_THRESHOLD=1M", `CALENDAR_DAILY_REQUEST_THRESHOLD="1M": not a whole number of requests a day, e.g. CALENDAR_DAILY_REQUEST_THRESHOLD=1000000`},
		{"CALENDAR_DAILY_REQUEST_THRESHOLD=0", `CALENDAR_DAILY_REQUEST_THRESHOLD="0": must be at least 1 request a day`},
		{"CALENDAR_DAILY_REQUEST_THRESHOLD=10000000000", `CALENDAR_DAILY_REQUEST_THRESHOLD="10000000000": must be at most 100000000 requests a day`},
	} {
		_, err := config.Parse(prod(tt.env))
		if !config.IsConfig(err) {
			t.Errorf("Parse(%s) = %v, want a config error", tt.env, err)
			continue
		}
		if got := err.Error(); strings.Contains(got, "\n") || !strings.HasPrefix(got, tt.want) || !strings.Contains(got, "e.g. ") {
			t.Errorf("Parse(%s) = %q, want one line starting %q with an example", tt.env, got, tt.want)
		}
	}
}
