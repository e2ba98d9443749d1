package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// End-to-end tests: the bot binary as a real process, the real Calendar
// and Slack clients pointed at emulators through GOOGLE_API_ENDPOINT and
// SLACK_API_URL, second-scale offsets and a one-second tick.

// at returns an instant d from now, on a whole second as calendars store it.
func at(d time.Duration) time.Time { return time.Now().Add(d).Truncate(time.Second) }

// sleepUntil sleeps until t.
func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }

// ledger reads every ledger entry of a subscription once the bots are gone.
func ledger(t *testing.T, path, sub string) map[string]meetingbot.Entry {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("sqlite.Open(%s) = %v", path, err)
	}
	defer s.Close()
	entries, err := s.Range(context.Background(), sub, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatalf("Range(%s) = %v", sub, err)
	}
	out := map[string]meetingbot.Entry{}
	for _, e := range entries {
		out[e.EventID] = e
	}
	return out
}

func TestReminderArrivesBetweenTriggerAndStart(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := start(t, w.dir, w.env("REMINDER_OFFSETS=5s"))
	addr := p.ready()

	begins := at(12 * time.Second)
	w.meeting(t, "standup", "Standup", begins)
	m := w.waitMessage(t, "Standup", 30*time.Second)
	trigger := begins.Add(-5 * time.Second)
	if m.Posted.Before(trigger) || !m.Posted.Before(begins) {
		t.Errorf("reminder posted at %v, want in [%v, %v)", m.Posted, trigger, begins)
	}
	sleepUntil(begins.Add(2 * time.Second))
	if n := len(w.messages("Standup")); n != 1 {
		t.Errorf("reminders of Standup = %d, want 1", n)
	}

	_, metrics := httpGet("http://" + addr + "/metrics")
	for _, want := range []string{
		"meetingbot_reminders_sent_total 1",
		"meetingbot_reminder_lateness_seconds_count 1",
		"meetingbot_subscriptions 1",
		`meetingbot_slack_calls_total{call="chat.postMessage",class="ok"} 1`,
		`meetingbot_calendar_calls_total{call="events.list",class="ok"}`,
		`meetingbot_audit_missing{subscription="alice@example.com"} 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("GET /metrics lacks %q", want)
		}
	}

	// bot audit, beside the running bot on its database, finds it delivered.
	a := start(t, w.dir, w.env("REMINDER_OFFSETS=5s"), "audit", "--since", "1h")
	if code, _ := a.wait(30 * time.Second); code != 0 || !strings.Contains(a.out.String(), "alice@example.com") {
		t.Errorf("bot audit: exit %d, output %q; want 0 and a row for alice@example.com", code, a.out.String())
	}
}

// TestKillAndRestart kills the bot with SIGKILL, lets one reminder fall
// due and one meeting start while it is down, and restarts it on the same
// database: the due reminder arrives once, late but before its meeting;
// the started meeting gets nothing; nothing is sent twice.
func TestKillAndRestart(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.env("REMINDER_OFFSETS=8s")
	p1 := start(t, w.dir, env)
	p1.ready()

	w.meeting(t, "before", "Sent before the kill", at(12*time.Second))
	w.waitMessage(t, "Sent before the kill", 30*time.Second)

	kill := at(time.Second)
	startedDuring := kill.Add(12 * time.Second) // trigger kill+4s, start kill+12s: both while down
	dueDuring := kill.Add(24 * time.Second)     // trigger kill+16s while down, start after the restart
	w.meeting(t, "missed", "Started while down", startedDuring)
	w.meeting(t, "due", "Due while down", dueDuring)
	p1.signal(syscall.SIGKILL)
	p1.wait(10 * time.Second)
	if now := time.Now(); !now.Before(startedDuring.Add(-8 * time.Second)) {
		t.Fatalf("the kill came at %v, after the trigger of the meeting it must miss", now)
	}

	sleepUntil(dueDuring.Add(-7 * time.Second)) // after both triggers and the first start
	p2 := start(t, w.dir, env)
	m := w.waitMessage(t, "Due while down", 20*time.Second)
	if trigger := dueDuring.Add(-8 * time.Second); m.Posted.Before(trigger) || !m.Posted.Before(dueDuring) {
		t.Errorf("late reminder posted at %v, want in [%v, %v)", m.Posted, trigger, dueDuring)
	}
	sleepUntil(dueDuring.Add(2 * time.Second))
	p2.signal(syscall.SIGTERM)
	if code, _ := p2.wait(15 * time.Second); code != 0 {
		t.Errorf("restarted bot exit status = %d, want 0", code)
	}

	for _, tt := range []struct {
		title string
		want  int
	}{{"Sent before the kill", 1}, {"Due while down", 1}, {"Started while down", 0}} {
		if got := len(w.messages(tt.title)); got != tt.want {
			t.Errorf("reminders of %q = %d, want %d", tt.title, got, tt.want)
		}
	}
	entries := ledger(t, env["DATABASE_PATH"], alice)
	if e := entries["missed"]; e.Outcome != meetingbot.Skipped || e.Reason != "started" {
		t.Errorf("ledger entry of the missed meeting = %s %q, want skipped \"started\"", e.Outcome, e.Reason)
	}
	if e := entries["due"]; e.Outcome != meetingbot.Sent {
		t.Errorf("ledger entry of the reminder due while down = %s, want sent", e.Outcome)
	}
}

func TestTwoProcessesOneDatabaseSendOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.env("CALENDARS="+alice+","+teamID, "REMINDER_OFFSETS=5s")
	p1 := start(t, w.dir, env)
	p2 := start(t, w.dir, env)
	p1.ready()
	p2.ready()

	var titles []string
	last := time.Time{}
	for i, cal := range []string{alice, team, alice, team, alice, team} {
		title := "Meeting " + string(rune('A'+i))
		last = at(9*time.Second + time.Duration(i)*time.Second)
		w.meetingIn(t, cal, "m"+string(rune('a'+i)), title, last)
		titles = append(titles, title)
	}
	sleepUntil(last.Add(3 * time.Second))
	for _, title := range titles {
		if got := len(w.messages(title)); got != 1 {
			t.Errorf("reminders of %s = %d, want 1", title, got)
		}
	}
}

// TestSIGTERMFinishesTheSendInFlight stops the bot while Slack holds back
// its answer to a post: the bot waits for it, records it, exits 0 within
// 10 seconds.
func TestSIGTERMFinishesTheSendInFlight(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.env("REMINDER_OFFSETS=5s")
	w.slack.Fail("chat.postMessage", "", slacktest.Fault{Delay: 3 * time.Second})
	p := start(t, w.dir, env)
	p.ready()
	w.meeting(t, "slow", "Slow answer", at(8*time.Second))
	w.waitMessage(t, "Slow answer", 30*time.Second) // stored; the answer is still held back

	p.signal(syscall.SIGTERM)
	code, took := p.wait(15 * time.Second)
	if code != 0 || took > 10*time.Second {
		t.Errorf("after SIGTERM: exit %d after %v, want 0 within 10s", code, took)
	}
	if e := ledger(t, env["DATABASE_PATH"], alice)["slow"]; e.Outcome != meetingbot.Sent {
		t.Errorf("ledger entry of the send in flight = %q, want sent", e.Outcome)
	}
	if line := logLine(p.out.String(), `"level":"ERROR"`); line != "" {
		t.Errorf("a clean stop logged an error: %s", line)
	}
}

// TestSIGTERMDuringATickLogsNoError stops the bot while its tick and its
// audit wait for a slow calendar, and its destination check for a slow
// Slack: it exits 0 and logs nothing at WARN or
// ERROR, for anyone alerting on errors would be paged by every deploy.
func TestSIGTERMDuringATickLogsNoError(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	slow := calendartest.Fault{Delay: 30 * time.Second}
	// The first tick's sync of the team calendar (the audit's read waits
	// for the same sync of the mirror), and the destination check.
	w.cal.QueueFaults(team, slow, slow)
	w.slack.Fail("users.lookupByEmail", "", slacktest.Fault{Delay: 30 * time.Second})
	p := start(t, w.dir, w.env("CALENDARS="+alice+","+teamID))
	p.ready()
	eventually(t, 30*time.Second, "the sync of the team calendar and the check of Alice's DM in flight", func() bool {
		return w.cal.Requests(team) >= 1 && len(w.slack.CallsTo("users.lookupByEmail")) >= 1
	})

	p.signal(syscall.SIGTERM)
	if code, took := p.wait(15 * time.Second); code != 0 || took > 10*time.Second {
		t.Errorf("after SIGTERM mid-tick: exit %d after %v, want 0 within 10s", code, took)
	}
	out := p.out.String()
	for _, bad := range []string{`"level":"ERROR"`, `"level":"WARN"`, "context canceled"} {
		if line := logLine(out, bad); line != "" {
			t.Errorf("a clean stop logged %s: %s", bad, line)
		}
	}
	if !strings.Contains(out, `"msg":"stopped"`) {
		t.Errorf("output lacks the clean stop:\n%s", out)
	}
}

// logLine returns the first line of out that contains s, or "".
func logLine(out, s string) string {
	for line := range strings.SplitSeq(out, "\n") {
		if strings.Contains(line, s) {
			return line
		}
	}
	return ""
}

func TestSIGINTIdleExits0(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := start(t, w.dir, w.env())
	p.ready()
	p.signal(syscall.SIGINT)
	if code, took := p.wait(15 * time.Second); code != 0 || took > 10*time.Second {
		t.Errorf("after SIGINT: exit %d after %v, want 0 within 10s", code, took)
	}
}

func TestMalformedEnvironmentStartsNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tests := []struct {
		bad  []string
		want string
	}{
		{[]string{"TICK_INTERVAL=500ms"}, `TICK_INTERVAL="500ms": must be at least 1s, e.g. TICK_INTERVAL=30s`},
		{[]string{"GOOGLE_CREDENTIALS_JSON="}, "GOOGLE_APPLICATION_CREDENTIALS: missing"},
		{[]string{"PUBLIC_URL=http://bot.example.com"}, `PUBLIC_URL="http://bot.example.com": must be https: Google posts Calendar notifications to https URLs only`},
		// Sweeps at 09:00 and 09:05 both miss a 09:02 meeting's 1m and 0 reminders.
		{[]string{"TICK_INTERVAL=5m", "REMINDER_OFFSETS=1m,0"}, "TICK_INTERVAL and REMINDER_OFFSETS: a sweep every 5m can miss every 1m reminder"},
		{[]string{`GOOGLE_CREDENTIALS_JSON={"type":"service_account","client_email":"x@y","private_key":"SECRET"}`}, "GOOGLE_CREDENTIALS_JSON: private_key is not"},
	}
	for _, tt := range tests {
		env := w.env(tt.bad...)
		p := start(t, w.dir, env)
		code, _ := p.wait(30 * time.Second)
		out := p.out.String()
		if code != 2 || !strings.Contains(out, tt.want) {
			t.Errorf("bot with %v: exit %d, output %q; want 2 and %q", tt.bad, code, out, tt.want)
		}
		if strings.Contains(out, "SECRET") {
			t.Errorf("bot with %v: output shows a secret: %q", tt.bad, out)
		}
		if _, err := os.Stat(env["DATABASE_PATH"]); err == nil {
			t.Errorf("bot with %v created the database; want nothing started", tt.bad)
		}
	}
}

// TestSecretInWrongVariableNotPrinted runs the built bot with the two
// common mistakes: the key's JSON pasted into the path variable
// (GOOGLE_APPLICATION_CREDENTIALS="$(cat key.json)") and a token put in
// SLACK_API_URL. It exits 2 naming both variables and prints neither.
func TestSecretInWrongVariableNotPrinted(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	key := string(w.cal.ServiceAccountJSON())
	const token = "xoxb-4242-4242-SuperSecretTokenValue"
	for _, tt := range []struct {
		env  []string
		want []string
	}{
		{[]string{"GOOGLE_CREDENTIALS_JSON=", "GOOGLE_APPLICATION_CREDENTIALS=" + key},
			[]string{"GOOGLE_APPLICATION_CREDENTIALS: holds what looks like the key itself"}},
		{[]string{"SLACK_API_URL=" + token}, []string{"SLACK_API_URL: looks like a secret"}},
		{[]string{"SLACK_API_URL=https://slack.com/api/" + token + "/"}, []string{"SLACK_API_URL: looks like a secret"}},
		{[]string{"GOOGLE_CREDENTIALS_JSON=", "GOOGLE_APPLICATION_CREDENTIALS=" + key, "SLACK_API_URL=" + token},
			[]string{"GOOGLE_APPLICATION_CREDENTIALS: holds", "SLACK_API_URL: looks like a secret"}},
	} {
		env := w.env(tt.env...)
		p := start(t, w.dir, env)
		code, _ := p.wait(30 * time.Second)
		out := p.out.String()
		if code != 2 {
			t.Errorf("bot with a secret in the wrong variable: exit %d, output %q; want 2", code, out)
		}
		for _, want := range tt.want {
			if !strings.Contains(out, want) {
				t.Errorf("bot output = %q, want %q", out, want)
			}
		}
		secrets := []string{"SuperSecretTokenValue", "BEGIN PRIVATE KEY", "private_key"}
		for line := range strings.SplitSeq(key, `\n`) {
			if len(line) > 40 && !strings.Contains(line, "PRIVATE KEY") {
				secrets = append(secrets, line)
			}
		}
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("bot output shows the secret %.12s…: %q", s, out)
			}
		}
	}
}

// TestSecretsNeverPrinted runs the bot at debug level through reminders,
// Calendar and Slack failures and a shutdown, and looks for the token and
// the private key in everything it wrote and served.
func TestSecretsNeverPrinted(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	token := "xoxb-4242-4242-SuperSecretTokenValue"
	w.slack.AddToken(token)
	key := string(w.cal.ServiceAccountJSON())
	env := w.env("SLACK_BOT_TOKEN="+token, "REMINDER_OFFSETS=3s,0", "CALENDARS="+alice+","+teamID)
	w.cal.QueueFaults(alice, calendartest.ServerError, calendartest.Unauthorized)
	w.slack.Fail("chat.postMessage", "", slacktest.Fault{Status: 429, RetryAfter: 1}, slacktest.Fault{Status: 500})
	w.slack.Fail("chat.postMessage", engID, slacktest.Fault{Error: "not_in_channel"})

	p := start(t, w.dir, env)
	addr := p.ready()
	begins := at(7 * time.Second)
	w.meeting(t, "secret", "Secret plans", begins)
	w.meetingIn(t, team, "team", "Team sync", begins)
	w.waitMessage(t, "Secret plans", 30*time.Second)
	sleepUntil(begins.Add(2 * time.Second))
	_, metrics := httpGet("http://" + addr + "/metrics")
	_, health := httpGet("http://" + addr + "/healthz")
	p.signal(syscall.SIGTERM)
	p.wait(15 * time.Second)

	everything := p.out.String() + metrics + health
	secrets := []string{token, "SuperSecretTokenValue"}
	for line := range strings.SplitSeq(key, `\n`) { // the PEM lines, as JSON escapes them
		if len(line) > 40 && !strings.Contains(line, "PRIVATE KEY") {
			secrets = append(secrets, line)
		}
	}
	if len(secrets) < 5 {
		t.Fatalf("found %d secret strings in the key, want the PEM lines too", len(secrets))
	}
	for _, s := range secrets {
		if strings.Contains(everything, s) {
			t.Errorf("output or endpoints show the secret %.12s…", s)
		}
	}
	if !strings.Contains(everything, "not_in_channel") {
		t.Errorf("output lacks the Slack failure the test provoked; is logging on?")
	}
}

// TestDemoAsNewcomer runs `bot` as a newcomer would: an empty environment
// but HOME and PATH, in a fresh directory. A reminder is printed within 30
// seconds; Ctrl-C stops it cleanly and it leaves no file behind.
func TestDemoAsNewcomer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := start(t, dir, nil)
	eventually(t, 30*time.Second, "a reminder printed by the demo", func() bool {
		return strings.Contains(p.out.String(), "starts in 1 minute")
	})
	eventually(t, 45*time.Second, "the demo's note on the moved meeting", func() bool {
		return strings.Contains(p.out.String(), "1:1 with Bob moved")
	})
	// Bob, not in CALENDARS, types /meetingbot on 1m,0: the reply, then
	// his reminders by DM.
	eventually(t, 60*time.Second, "Bob's reminder after his slash command", func() bool {
		return strings.Contains(p.out.String(), "Slack DM to @bob")
	})
	// The design review moves after its first reminder: that message is
	// edited in place, and shown so.
	eventually(t, 60*time.Second, "the reminder edited in place", func() bool {
		return strings.Contains(p.out.String(), "Slack DM to @alice  [EDITED in place: the message posted at ")
	})
	eventually(t, 60*time.Second, "the demo's note on the cancelled meeting", func() bool {
		return strings.Contains(p.out.String(), "Budget sync cancelled before its reminder")
	})
	out := p.out.String()
	if !regexp.MustCompile(`Slack: @bob types  /meetingbot on 1m,0\n┌ reply only @bob sees\n│ On\. Next reminder: Team retro at .* \(1m before it starts\)\.`).MatchString(out) {
		t.Errorf("demo output lacks Bob's slash command and its reply:\n%s", out)
	}
	if i, j := strings.Index(out, "reply only @bob sees"), strings.Index(out, "Slack DM to @bob"); i < 0 || j < i {
		t.Errorf("Bob's reminder comes before his slash command's reply:\n%s", out)
	}
	for _, want := range []string{"Sprint planning", "[Join] https://", "Slack #engineering", "[Mute this series]",
		"Two reminders per meeting, 1 minute before it and when it starts",
		"both (1 minute before and at the start) go out for the new time only"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	// The opening schedule lists every meeting, the late-created one too,
	// and every time names its zone.
	if !regexp.MustCompile(`\d\d:\d\d:\d\d \S+  Quick question \(Alice's calendar; created at \d\d:\d\d:\d\d \S+, after its 1-minute reminder time`).MatchString(out) {
		t.Errorf("demo's opening schedule lacks the late-created meeting with zoned times:\n%s", out)
	}
	if bare := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d  `).FindString(out); bare != "" {
		t.Errorf("demo prints a time without its zone: %q", bare)
	}
	p.signal(syscall.SIGINT)
	if code, took := p.wait(15 * time.Second); code != 0 || took > 10*time.Second {
		t.Errorf("demo after SIGINT: exit %d after %v, want 0 within 10s", code, took)
	}
	// Stopped early, it still sums up what the bot did, from its ledger,
	// and what the calendar has of the meetings without a reminder, as it
	// is at the stop: the 1:1's new time and the retro's end are still
	// to come.
	out = p.out.String()
	summary := strings.Index(out, "Stopped before the last demo meeting. What the bot did (from its ledger; ")
	if summary < 0 {
		t.Fatalf("demo after SIGINT printed no summary of what was sent and why:\n%s", out)
	}
	for _, want := range []string{"\n  sent     ", "Sprint planning, 1m before",
		"Design review <API v2>, 1m before; edited since: moved to ",
		"  none     Budget sync: cancelled before its reminder time (the calendar has it cancelled)",
		"  none     1:1 with Bob at "} {
		if !strings.Contains(out[summary:], want) {
			t.Errorf("demo's summary after SIGINT lacks %q:\n%s", want, out[summary:])
		}
	}
	if !strings.Contains(out, "It ends by itself after the last meeting, at ") {
		t.Errorf("demo's banner does not say when it ends:\n%s", out)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) > 0 {
		t.Errorf("demo left %v in its working directory", left)
	}
}

// TestHealthzNamesTheFailingSubscription makes Alice's calendar refuse the
// bot for a while: /healthz turns 503 naming her subscription and the
// error, then 200 again once reads succeed.
func TestHealthzNamesTheFailingSubscription(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	faults := make([]calendartest.Fault, 10)
	for i := range faults {
		faults[i] = calendartest.Forbidden
	}
	w.cal.QueueFaults(alice, faults...)
	p := start(t, w.dir, w.env("CALENDARS="+alice+","+teamID))
	addr := p.addr()

	var body string
	eventually(t, 30*time.Second, "GET /healthz = 503", func() bool {
		var status int
		status, body = httpGet("http://" + addr + "/healthz")
		return status == 503
	})
	for _, want := range []string{"unhealthy: 1 of 2", "subscription alice@example.com:", "last error: read calendar alice@example.com"} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /healthz body = %q, want it to contain %q", body, want)
		}
	}
	eventually(t, 30*time.Second, "GET /healthz = 200 after the faults", func() bool {
		status, _ := httpGet("http://" + addr + "/healthz")
		return status == 200
	})
	_, metrics := httpGet("http://" + addr + "/metrics")
	if want := `meetingbot_calendar_errors_total{call="events.list",class="permanent"} 10`; !strings.Contains(metrics, want) {
		t.Errorf("GET /metrics lacks %q", want)
	}
}

// TestMetricsOnPrivateListener runs the built bot with METRICS_ADDR: the
// HTTP_ADDR listener, the one Slack or Google would reach, answers /healthz
// with "ok" and nothing else; /metrics and the detailed page are on the
// private listener.
func TestMetricsOnPrivateListener(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := start(t, w.dir, w.env("METRICS_ADDR=127.0.0.1:0", "CALENDARS="+alice+","+teamID))
	public := p.ready()
	var private string
	eventually(t, 30*time.Second, "the METRICS_ADDR address in the log", func() bool {
		for line := range strings.SplitSeq(p.out.String(), "\n") {
			var rec struct {
				Msg, Listener, Addr string
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Listener == "METRICS_ADDR" {
				private = rec.Addr
			}
		}
		return private != ""
	})
	if status, body := httpGet("http://" + public + "/healthz"); status != 200 || body != "ok\n" {
		t.Errorf("GET HTTP_ADDR/healthz = %d %q, want 200 \"ok\\n\"", status, body)
	}
	if status, _ := httpGet("http://" + public + "/metrics"); status != 404 {
		t.Errorf("GET HTTP_ADDR/metrics = %d, want 404", status)
	}
	eventually(t, 30*time.Second, "METRICS_ADDR/metrics by subscription", func() bool {
		status, body := httpGet("http://" + private + "/metrics")
		return status == 200 && strings.Contains(body, `subscription="`+teamID+`"`)
	})
	if status, body := httpGet("http://" + private + "/healthz"); status != 200 || !strings.HasPrefix(body, "ok: 2 subscriptions swept") {
		t.Errorf("GET METRICS_ADDR/healthz = %d %q, want the detailed page", status, body)
	}
}
