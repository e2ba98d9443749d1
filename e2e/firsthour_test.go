package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// TestWrongDestinationsAreFoundAtStartUp starts the bot with CALENDARS
// entries whose destinations Slack refuses: a channel that does not exist,
// an archived one, one the bot is not in, and an email that is not in
// Slack. Long before any reminder is due, each is logged once at ERROR
// naming the entry and the fix, and listed on /healthz, which stays 200;
// the bot does not exit, and the good subscription's reminder arrives.
func TestWrongDestinationsAreFoundAtStartUp(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.slack.AddChannel(slacktest.Channel{ID: "C0OLD00001", Name: "old", Archived: true, Member: true})
	w.slack.AddChannel(slacktest.Channel{ID: "C0RANDOM01", Name: "random"})
	const bob = "bob@example.com" // not in Slack
	w.cal.AddCalendar(bob)
	bad := map[string]string{
		team + "=#engineering": "no channel named #engineering is visible to the bot: check the name in CALENDARS",
		team + "=C0OLD00001":   "channel C0OLD00001 is archived: unarchive it or set another destination in CALENDARS",
		team + "=#random":      "invite the bot to #random: /invite @meetingbot",
		bob:                    "no active Slack user has the email bob@example.com",
	}
	entries := []string{alice}
	for e := range bad {
		entries = append(entries, e)
	}
	p := start(t, w.dir, w.env("CALENDARS="+strings.Join(entries, ","), "REMINDER_OFFSETS=5s"))
	addr := p.ready()
	began := time.Now()

	eventually(t, 20*time.Second, "an ERROR line for each bad destination", func() bool {
		return strings.Count(p.out.String(), `"msg":"destination needs attention`) >= len(bad)
	})
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("bad destinations reported %v after start-up, want within seconds", took)
	}
	out := p.out.String()
	for entry, fix := range bad {
		line := logLine(out, `"subscription":"`+entry+`"`)
		if !strings.Contains(line, `"level":"ERROR"`) || !strings.Contains(line, fix) {
			t.Errorf("log line for %s = %s, want ERROR with %q", entry, line, fix)
		}
	}
	status, health := httpGet("http://" + addr + "/healthz")
	if status != http.StatusOK || !strings.Contains(health, "attention: 4 of 5 subscriptions cannot reach their Slack destination") {
		t.Errorf("GET /healthz = %d %q, want 200 listing the 4 bad destinations", status, health)
	}
	for entry := range bad {
		if !strings.Contains(health, "subscription "+entry+": ") {
			t.Errorf("GET /healthz body lacks %s:\n%s", entry, health)
		}
	}
	_, metrics := httpGet("http://" + addr + "/metrics")
	if want := `meetingbot_destination_unusable{subscription="bob@example.com"} 1`; !strings.Contains(metrics, want) {
		t.Errorf("GET /metrics lacks %q", want)
	}

	w.meeting(t, "standup", "Standup", at(9*time.Second))
	w.waitMessage(t, "Standup", 30*time.Second)
	if p.exited() {
		t.Fatalf("the bot exited: %v", p.err)
	}
	if n := strings.Count(p.out.String(), `"msg":"destination needs attention`); n != len(bad) {
		t.Errorf("destination ERROR lines = %d, want %d: each logged once", n, len(bad))
	}
}

// TestFirstHourMistakesStopAtStartUp runs the binary with the mistakes a
// newcomer makes in the first hour: each exits at once naming the variable,
// what it holds instead, and where the right value is, with no prefix
// chain before it and no secret in it.
func TestFirstHourMistakesStopAtStartUp(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	client := filepath.Join(w.dir, "client_secret_1234.apps.googleusercontent.com.json")
	if err := os.WriteFile(client, []byte(`{"installed":{"client_id":"1234.apps.googleusercontent.com","client_secret":"GOCSPX-TOPSECRET","redirect_uris":["http://localhost"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  []string
		code int
		want string // the start of the last line
	}{
		{"user token", []string{"SLACK_BOT_TOKEN=xoxp-1-2-3-TOPSECRET"}, 2,
			"SLACK_BOT_TOKEN: is a user token (xoxp-…), which acts as the person who installed the app; the bot needs its own: copy the Bot User OAuth Token (xoxb-…)"},
		{"path as JSON", []string{"GOOGLE_CREDENTIALS_JSON=/secrets/key.json"}, 2,
			"GOOGLE_CREDENTIALS_JSON: this looks like a path, not the JSON itself (the value is secret and not shown): use GOOGLE_APPLICATION_CREDENTIALS"},
		{"OAuth client file", []string{"GOOGLE_CREDENTIALS_JSON=", "GOOGLE_APPLICATION_CREDENTIALS=" + client}, 2,
			`GOOGLE_APPLICATION_CREDENTIALS: the file is an OAuth client ID of a Desktop app ("installed"), which identifies an app, not an account: for a service account, download a key instead (Google Cloud console > IAM & Admin > Service accounts`},
		{"token Slack rejects", []string{"SLACK_BOT_TOKEN=xoxb-0000-0000-TOPSECRETrevoked"}, 1,
			"bot: SLACK_BOT_TOKEN was rejected by Slack (invalid_auth): copy the Bot User OAuth Token (xoxb-…) from your app's OAuth & Permissions page"},
	}
	for _, tt := range tests {
		env := w.env(tt.env...)
		p := start(t, w.dir, env)
		code, _ := p.wait(30 * time.Second)
		out := strings.TrimSpace(p.out.String())
		last := out[strings.LastIndex(out, "\n")+1:]
		if code != tt.code || !strings.HasPrefix(last, tt.want) {
			t.Errorf("%s: exit %d, last line %q; want %d and a line starting %q", tt.name, code, last, tt.code, tt.want)
		}
		if strings.Contains(out, "TOPSECRET") || strings.Contains(out, "notify: check") {
			t.Errorf("%s: output shows a secret or a prefix chain:\n%s", tt.name, out)
		}
		if _, err := os.Stat(env["DATABASE_PATH"]); err == nil {
			t.Errorf("%s: the database was created; want nothing started", tt.name)
		}
	}
}
