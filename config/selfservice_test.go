package config_test

import (
	"strings"
	"testing"

	"github.com/meetingbot/meetingbot/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Secrets of the self-service tests: a signing secret as Slack makes them
// (32 hex digits) and an app-level token, each with a marker that must
// never appear in an error or in String.
const (
	signingSecret = "0123456789abcdef0123456789abcdef"
	appToken      = "xapp-1-A0APP0001-42-HIDDENappvalue"
)

// With self-service from Slack on, CALENDARS may be empty; the secrets
// are read but never shown.
func TestSelfServiceParses(t *testing.T) {
	for _, tt := range []struct {
		name         string
		env          []string
		http, socket bool
	}{
		{"request URLs", []string{"SLACK_SIGNING_SECRET=" + signingSecret}, true, false},
		{"socket mode", []string{"SLACK_APP_TOKEN=" + appToken}, false, true},
		{"both", []string{"SLACK_SIGNING_SECRET=" + signingSecret, "SLACK_APP_TOKEN=" + appToken}, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Parse(env(append([]string{"SLACK_BOT_TOKEN=" + secretToken, "GOOGLE_CREDENTIALS_JSON=" + saJSON,
				"SLACK_ADMINS= U0LISA0001 ,W0MIKE0001,U0LISA0001"}, tt.env...)...))
			require.NoError(t, err)
			assert.True(t, c.SelfService())
			assert.Empty(t, c.Subscriptions, "CALENDARS unset")
			assert.Equal(t, tt.http, c.SlackSigningSecret == signingSecret, "SlackSigningSecret")
			assert.Equal(t, tt.socket, c.SlackAppToken == appToken, "SlackAppToken")
			assert.Equal(t, []string{"U0LISA0001", "W0MIKE0001"}, c.SlackAdmins)
			s := c.String()
			assert.Contains(t, s, "slack_admins=[U0LISA0001 W0MIKE0001]")
			assert.NotContains(t, s, signingSecret)
			assert.NotContains(t, s, "HIDDEN")
		})
	}
	c, err := config.Parse(prod())
	require.NoError(t, err)
	assert.False(t, c.SelfService())
	assert.Contains(t, c.String(), "selfservice=off")
}

// Each malformed self-service value stops start-up with one line naming
// the variable, saying what is wrong and giving an example, without the
// value when it is a secret.
func TestSelfServiceProblems(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  func(string) string
		want string
	}{
		{"secret with a space", prod("SLACK_SIGNING_SECRET=HIDDEN value0123456789"), "SLACK_SIGNING_SECRET: must be the Signing Secret without spaces (the value is secret and not shown)"},
		{"secret is a token", prod("SLACK_SIGNING_SECRET=xoxb-1-2-HIDDEN"), "SLACK_SIGNING_SECRET: is a Slack token, not the Signing Secret"},
		{"secret punctuation", prod("SLACK_SIGNING_SECRET=HIDDEN/0123456789abcdef"), "SLACK_SIGNING_SECRET: must be the Signing Secret, 32 hex digits (0-9, a-f), but has 23 characters, some of them not hex digits"},
		{"secret short", prod("SLACK_SIGNING_SECRET=HIDDEN42"), "SLACK_SIGNING_SECRET: must be the Signing Secret, 32 hex digits (0-9, a-f), but has 8 characters"},
		{"secret of 22", prod("SLACK_SIGNING_SECRET=0123456789abcdef012345"), "SLACK_SIGNING_SECRET: must be the Signing Secret, 32 hex digits (0-9, a-f), but has 22 characters (the value is secret and not shown)"},
		{"secret of 31", prod("SLACK_SIGNING_SECRET=0123456789abcdef0123456789abcde"), "SLACK_SIGNING_SECRET: must be the Signing Secret, 32 hex digits (0-9, a-f), but has 31 characters (the value is secret and not shown)"},
		{"secret of 34", prod("SLACK_SIGNING_SECRET=0123456789abcdef0123456789abcdef01"), "SLACK_SIGNING_SECRET: must be the Signing Secret, 32 hex digits (0-9, a-f), but has 34 characters (the value is secret and not shown)"},
		{"secret of 40", prod("SLACK_SIGNING_SECRET=0123456789abcdef0123456789abcdef01234567"), "SLACK_SIGNING_SECRET: must be the Signing Secret, 32 hex digits (0-9, a-f), but has 40 characters (the value is secret and not shown)"},
		{"secret not hex", prod("SLACK_SIGNING_SECRET=8f742231b10e8888abcd99yyyzzz85a5"), "SLACK_SIGNING_SECRET: must be the Signing Secret, 32 hex digits (0-9, a-f), but has characters that are not hex digits (0-9, a-f) (the value is secret and not shown)"},
		{"secret upper case", prod("SLACK_SIGNING_SECRET=0123456789ABCDEF0123456789ABCDEF"), "SLACK_SIGNING_SECRET: must be the Signing Secret, 32 hex digits (0-9, a-f), but has upper-case letters, and Slack's are lower case"},
		{"app token is a bot token", prod("SLACK_APP_TOKEN=xoxb-1-2-HIDDEN"), "SLACK_APP_TOKEN: is a bot token (xoxb-…), which belongs in SLACK_BOT_TOKEN"},
		{"app token is a user token", prod("SLACK_APP_TOKEN=xoxp-1-2-HIDDEN"), "SLACK_APP_TOKEN: is a user token (xoxp-…)"},
		{"app token shape", prod("SLACK_APP_TOKEN=HIDDENtoken"), "SLACK_APP_TOKEN: must be an app-level token starting with xapp-"},
		{"app token space", prod("SLACK_APP_TOKEN=xapp-1 HIDDEN"), "SLACK_APP_TOKEN: must be an app-level token without spaces"},
		{"admins email", prod("SLACK_SIGNING_SECRET="+signingSecret, "SLACK_ADMINS=U0LISA0001,mike@example.com"), `SLACK_ADMINS="U0LISA0001,mike@example.com": "mike@example.com" is an email; SLACK_ADMINS takes Slack user IDs`},
		{"admins not an ID", prod("SLACK_SIGNING_SECRET="+signingSecret, "SLACK_ADMINS=@lisa"), `SLACK_ADMINS="@lisa": "@lisa" is not a Slack user ID`},
		{"admins empty entry", prod("SLACK_SIGNING_SECRET="+signingSecret, "SLACK_ADMINS=U0LISA0001,,U0MIKE0001"), `SLACK_ADMINS="U0LISA0001,,U0MIKE0001": has an empty entry`},
		{"admins without self-service", prod("SLACK_ADMINS=U0LISA0001"), "SLACK_ADMINS: is set, but self-service from Slack is off"},
		{"self-service alone", env("SLACK_SIGNING_SECRET=" + signingSecret), "SLACK_BOT_TOKEN and GOOGLE_APPLICATION_CREDENTIALS: missing: self-service from Slack is set up"},
		{"no calendars, no self-service", env("SLACK_BOT_TOKEN="+secretToken, "GOOGLE_CREDENTIALS_JSON="+saJSON), "CALENDARS: missing: name at least one calendar, e.g. CALENDARS=alice@example.com,team@example.com=#eng, or let people subscribe from Slack with SLACK_SIGNING_SECRET or SLACK_APP_TOKEN"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse(tt.env)
			require.True(t, config.IsConfig(err), "Parse(%s) = %v, want a config error", tt.name, err)
			got := err.Error()
			if strings.Contains(got, "\n") || !strings.HasPrefix(got, tt.want) {
				t.Errorf("Parse(%s) = %q, want one line starting %q", tt.name, got, tt.want)
			}
			if !strings.Contains(got, "e.g. ") {
				t.Errorf("Parse(%s) = %q, want an example", tt.name, got)
			}
			if strings.Contains(got, "HIDDEN") || strings.Contains(got, signingSecret) {
				t.Errorf("Parse(%s) = %q, shows a secret", tt.name, got)
			}
		})
	}
}
