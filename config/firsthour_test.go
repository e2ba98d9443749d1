package config_test

import (
	"strings"
	"testing"

	"github.com/meetingbot/meetingbot/config"
)

// TestFirstHourMistakes parses the values a newcomer writes in the first
// hour that look almost right: each gets one line naming the variable and
// what was meant, not a fix that points elsewhere.
func TestFirstHourMistakes(t *testing.T) {
	tests := []struct {
		name string
		env  func(string) string
		want string // the one problem line
	}{
		{"semicolons", prod("CALENDARS=a@x.com;b@x.com"),
			`CALENDARS="a@x.com;b@x.com": entries are separated by commas, not semicolons, e.g. CALENDARS=a@x.com,b@x.com`},
		{"semicolons and destinations", prod("CALENDARS=a@x.com=#eng; b@x.com"),
			`CALENDARS="a@x.com=#eng; b@x.com": entries are separated by commas, not semicolons, e.g. CALENDARS=a@x.com=#eng,b@x.com`},
		{"a comma for a dot", prod("CALENDARS=alice@example,com"),
			`CALENDARS="alice@example,com": "alice@example" then "com": a comma where the email's dot should be? e.g. CALENDARS=alice@example.com`},
		{"a comma for a dot, later", prod("CALENDARS=team@example.com=#eng,bob@example,co.uk"),
			`CALENDARS="team@example.com=#eng,bob@example,co.uk": "bob@example" then "co.uk": a comma where the email's dot should be? e.g. CALENDARS=bob@example.co.uk`},
		{"rotating token", prod("SLACK_BOT_TOKEN=xoxe.xoxb-1-MTIzNDU2Nzg5MA-SECRETrotating"),
			"SLACK_BOT_TOKEN: is a rotating token (xoxe.…): the app has token rotation on, so Slack issues bot tokens that expire after 12 hours and must be renewed with a refresh token, which this bot does not do; use an app without it (slack-app-manifest.yaml sets token_rotation_enabled: false) and copy its Bot User OAuth Token (xoxb-…) from the OAuth & Permissions page, e.g. SLACK_BOT_TOKEN=xoxb-1234-5678-abcd"},
		{"refresh token", prod("SLACK_BOT_TOKEN=xoxe-1-SECRETrefresh"),
			"SLACK_BOT_TOKEN: is a refresh token (xoxe-…) of an app with token rotation on, not a bot token"},
		{"PUBLIC_URL with the notify path", prod("PUBLIC_URL=https://bot.example.com/google/notify"),
			`PUBLIC_URL="https://bot.example.com/google/notify": ends with /google/notify, which the bot adds itself (the channels would post to https://bot.example.com/google/notify/google/notify): PUBLIC_URL is the base URL, e.g. PUBLIC_URL=https://bot.example.com`},
		{"PUBLIC_URL with /healthz", prod("PUBLIC_URL=https://example.com/meetingbot/healthz/"),
			`PUBLIC_URL="https://example.com/meetingbot/healthz/": ends with /healthz, which the bot adds itself`},
		{"~ in DATABASE_PATH", prod("DATABASE_PATH=~/reminders.db", "HOME=/home/alice"),
			`DATABASE_PATH="~/reminders.db": starts with ~, which is not expanded here (only a shell expands it, and not in quotes, a Dockerfile, a systemd unit or fly.toml): write the whole path, e.g. DATABASE_PATH=/home/alice/reminders.db`},
		{"~ in GOOGLE_APPLICATION_CREDENTIALS", env("SLACK_BOT_TOKEN="+secretToken, "CALENDARS=alice@example.com", "GOOGLE_APPLICATION_CREDENTIALS=~/.config/gcloud/application_default_credentials.json", "HOME=/root"),
			`GOOGLE_APPLICATION_CREDENTIALS="~/.config/gcloud/application_default_credentials.json": starts with ~, which is not expanded here (only a shell expands it, and not in quotes, a Dockerfile, a systemd unit or fly.toml): write the whole path, e.g. GOOGLE_APPLICATION_CREDENTIALS=/root/.config/gcloud/application_default_credentials.json`},
		{"a channel name with capitals", prod("CALENDARS=team@example.com=#Eng"),
			`CALENDARS="team@example.com=#Eng": destination "#Eng" has capitals, and Slack's channel names are lower case: write #eng, e.g. CALENDARS=`},
		{"a channel name without #", prod("CALENDARS=team@example.com=eng"),
			`CALENDARS="team@example.com=eng": destination "eng" has no #: for the channel, write #eng (or its ID, C…); for a person, their email or user ID (U…), e.g. CALENDARS=`},
		{"a channel name of words", prod("CALENDARS=team@example.com=#eng team"),
			`CALENDARS="team@example.com=#eng team": destination "#eng team" is not a Slack channel name, which has only lower-case letters, digits, - and _ (no spaces)`},
		{"a person by @name", prod("CALENDARS=alice@example.com=@alice"),
			`CALENDARS="alice@example.com=@alice": destination "@alice": @names are not accepted (a display name changes and two people may share it): write the person's email, or their user ID (U…, their profile's ⋮ > Copy member ID), e.g. CALENDARS=`},
		{"a channel ID in lower case", prod("CALENDARS=team@example.com=c0123abcd"),
			`CALENDARS="team@example.com=c0123abcd": destination "c0123abcd" looks like a Slack ID in lower case; IDs are upper case: write C0123ABCD`},
		{"a channel name like an ID", prod("CALENDARS=team@example.com=general"),
			`CALENDARS="team@example.com=general": destination "general" has no #: for the channel, write #general`},
		{"a number for a duration", prod("TICK_INTERVAL=30"),
			`TICK_INTERVAL="30": has no unit: write 30s for seconds or 30m for minutes, e.g. TICK_INTERVAL=30s`},
		{"words for a duration", prod("REMINDER_OFFSETS=10 minutes"),
			`REMINDER_OFFSETS="10 minutes": "10 minutes" is not a duration: write a number with a unit, like 30s or 10m, e.g. REMINDER_OFFSETS=10m,1m,0`},
	}
	for _, tt := range tests {
		_, err := config.Parse(tt.env)
		if err == nil {
			t.Errorf("Parse(%s) = nil, want %q", tt.name, tt.want)
			continue
		}
		got := err.Error()
		if strings.Count(got, "\n") != 0 || !strings.HasPrefix(got, tt.want) {
			t.Errorf("Parse(%s) = %q, want one line starting %q", tt.name, got, tt.want)
		}
		if strings.Contains(got, "SECRET") {
			t.Errorf("Parse(%s) shows the secret: %q", tt.name, got)
		}
	}
}

// TestFirstHourLookalikesPass keeps what those checks must not refuse.
func TestFirstHourLookalikesPass(t *testing.T) {
	for _, e := range [][]string{
		{"CALENDARS=alice@example.com,bob@example.com"},
		{"CALENDARS=room@group.calendar.google.com=C0123ABCD,alice@example.com"},
		{"PUBLIC_URL=https://example.com/meetingbot"},
		{"TICK_INTERVAL=30s", "REMINDER_OFFSETS=10m,0"},
	} {
		if _, err := config.Parse(prod(e...)); err != nil {
			t.Errorf("Parse(%v) = %v, want no problem", e, err)
		}
	}
}
