package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meetingbot/meetingbot/config"
)

// environ turns KEY=value pairs into a getenv.
func environ(kv ...string) func(string) string {
	m := map[string]string{}
	for _, l := range kv {
		k, v, _ := strings.Cut(l, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

const fakeToken = "xoxb-000-000-TOPSECRETtoken"

func TestHelpListsEveryVariable(t *testing.T) {
	for _, arg := range []string{"-h", "--help", "help"} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), []string{arg}, environ(), &stdout, &stderr)
		if code := exitCode(err, &stderr); code != 0 {
			t.Errorf("run(%s) exit = %d, want 0", arg, code)
		}
		for _, v := range config.Vars {
			if !strings.Contains(stdout.String(), v.Name) || !strings.Contains(stdout.String(), v.Default) {
				t.Errorf("run(%s) output lacks %s with its default %q", arg, v.Name, v.Default)
			}
		}
	}
}

func TestCommandLineMistakesExit2(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"serve"}, `unknown command "serve"`},
		{[]string{"demo", "now"}, `unexpected argument "now"`},
		{[]string{"audit"}, "bot audit: no configuration"},
		{[]string{"audit", "--bogus"}, "bot audit: flag provided but not defined"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), tt.args, environ(), &stdout, &stderr)
		if code := exitCode(err, &stderr); code != 2 || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("run(%v) exit = %d, stderr %q, want 2 and %q", tt.args, code, stderr.String(), tt.want)
		}
	}
}

// TestMalformedVariableExits2 runs the bot with one bad variable at a time:
// it exits 2 naming the variable, never shows the secrets, and starts
// nothing (no database file appears).
func TestMalformedVariableExits2(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "bot.db")
	key := `{"type":"service_account","private_key":"TOPSECRETkey"}`
	good := []string{"SLACK_BOT_TOKEN=" + fakeToken, "GOOGLE_CREDENTIALS_JSON=" + key, "CALENDARS=alice@example.com", "DATABASE_PATH=" + db, "HTTP_ADDR=127.0.0.1:0"}
	tests := []struct {
		bad     string
		wantVar string
	}{
		{"GOOGLE_CREDENTIALS_JSON=", "GOOGLE_APPLICATION_CREDENTIALS"}, // token without credentials
		{"CALENDARS=", "CALENDARS"},
		{"SLACK_BOT_TOKEN=TOPSECRET not a token", "SLACK_BOT_TOKEN"},
		{"SLACK_API_URL=slack", "SLACK_API_URL"},
		{"GOOGLE_APPLICATION_CREDENTIALS=" + dir + "/missing.json", "GOOGLE_APPLICATION_CREDENTIALS"},
		{"GOOGLE_CREDENTIALS_JSON={TOPSECRET", "GOOGLE_CREDENTIALS_JSON"},
		{"GOOGLE_API_ENDPOINT=:/", "GOOGLE_API_ENDPOINT"},
		{"GOOGLE_IMPERSONATE=maybe", "GOOGLE_IMPERSONATE"},
		{"CALENDARS=alice@example.com=nowhere", "CALENDARS"},
		{"REMINDER_OFFSETS=-10m", "REMINDER_OFFSETS"},
		{"REMINDER_OFFSETS=1m,60s", "REMINDER_OFFSETS"},
		{"TICK_INTERVAL=500ms", "TICK_INTERVAL"},
		{"DATABASE_PATH=" + dir + "/nope/bot.db", "DATABASE_PATH"},
		{"HTTP_ADDR=localhost", "HTTP_ADDR"},
		{"LOG_LEVEL=trace", "LOG_LEVEL"},
		{"LOG_FORMAT=yaml", "LOG_FORMAT"},
		{"SLACK_SIGNING_SECRET=TOPSECRET with a space", "SLACK_SIGNING_SECRET"},
		{"SLACK_APP_TOKEN=xoxb-1-2-TOPSECRET", "SLACK_APP_TOKEN"},
		{"SLACK_ADMINS=U0LISA0001", "SLACK_ADMINS"}, // without self-service
	}
	for _, tt := range tests {
		t.Run(tt.bad, func(t *testing.T) {
			env := append(append([]string(nil), good...), tt.bad)
			if strings.HasPrefix(tt.bad, "GOOGLE_APPLICATION_CREDENTIALS=") {
				env = append(env, "GOOGLE_CREDENTIALS_JSON=")
			}
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), nil, environ(env...), &stdout, &stderr)
			code := exitCode(err, &stderr)
			out := stdout.String() + stderr.String()
			if code != 2 || !strings.HasPrefix(out, tt.wantVar) {
				t.Errorf("run(%s) = exit %d, output %q; want exit 2 and a line naming %s", tt.bad, code, out, tt.wantVar)
			}
			if strings.Contains(out, "TOPSECRET") {
				t.Errorf("run(%s) output %q shows a secret", tt.bad, out)
			}
			if _, err := os.Stat(db); err == nil {
				t.Errorf("run(%s) created %s; want nothing started", tt.bad, db)
			}
		})
	}
}
