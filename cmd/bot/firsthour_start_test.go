package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// syncBuf is a log destination safe for the goroutine that waits.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) records() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(s.b.String()), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil {
			out = append(out, rec)
		}
	}
	return out
}

// A DATABASE_URL whose host does not answer is retried forever, since a
// database often starts after its replicas; after a minute the bot says so
// once at ERROR, naming the host, and keeps trying. The minute passes on a
// fake clock.
func TestUnreachableDatabaseIsSaidAfterAMinute(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	logs := &syncBuf{}
	log := newLogger(config.Config{LogFormat: "json"}, logs)
	cfg := config.Config{DatabaseURL: "postgres://meetingbot:secret-pw@127.0.0.1:1/meetingbot?connect_timeout=2", TickInterval: 30 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s, err := waitPostgres(ctx, cfg, log, startWaits{first: startRetry, max: maxStartRetry, alarm: unreachableAlarm, now: fake.Now, sleep: fake.Sleep})
		if s != nil || err != nil {
			t.Errorf("waitPostgres after ctx ended = %v, %v; want nil, nil", s, err)
		}
	}()
	// Attempts at 0, 1, 3, 7, 15, 31, 61 s and 91, 121 s after.
	eventually(t, 30*time.Second, "nine attempts", func() bool { return len(fake.Sleeps()) >= 9 })
	cancel()
	<-done
	var warns, errs int
	for _, r := range logs.records() {
		switch r["level"] {
		case "WARN":
			warns++
		case "ERROR":
			errs++
			if warns != 6 || r["host"] != "127.0.0.1:1" || r["for"] != "1m1s" || !strings.Contains(r["msg"].(string), "check the host and port in DATABASE_URL") {
				t.Errorf("ERROR after %d warnings: %v; want it after the 6 of the first minute, naming host 127.0.0.1:1, 1m1s", warns, r)
			}
		}
	}
	if errs != 1 || warns < 8 {
		t.Errorf("%d ERROR and %d WARN lines, want one ERROR and a WARN per attempt", errs, warns)
	}
	if strings.Contains(logs.b.String(), "secret-pw") {
		t.Errorf("the log shows DATABASE_URL's password")
	}
}

// A DATABASE_URL naming a database that does not exist stops the bot at
// start-up with the createdb that makes it.
func TestMissingDatabaseSaysCreatedb(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(pgtest.Server(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/meetingbot_no_such_db"
	w := newWorld(t)
	p := start(t, w.dir, w.env("DATABASE_PATH=", "DATABASE_URL="+u.String()))
	code, _ := p.wait(time.Minute)
	out := strings.TrimSpace(p.out.String())
	last := out[strings.LastIndex(out, "\n")+1:]
	want := "bot: DATABASE_URL names a database that does not exist: create it (createdb -h 127.0.0.1 -p 5432 -U postgres meetingbot_no_such_db, or CREATE DATABASE meetingbot_no_such_db as a user who may), then start the bot, which creates its tables"
	if code != 1 || !strings.HasPrefix(last, want) {
		t.Errorf("bot with a database that does not exist: exit %d, last line %q; want 1 and %q", code, last, want)
	}
}

// bot audit with a calendar the bot cannot read says what it did not audit,
// exits 3, and claims nothing of that calendar's reminders.
func TestAuditSaysWhatWasNotAudited(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.cal.Share(team, "someone@example.com")
	env := w.env("CALENDARS=" + alice + "," + teamID)
	s, err := sqlite.Open(context.Background(), env["DATABASE_PATH"])
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	p := start(t, w.dir, env, "audit", "--since", "1h")
	code, _ := p.wait(time.Minute)
	out := strings.TrimSpace(p.out.String())
	last := out[strings.LastIndex(out, "\n")+1:]
	if code != 3 || !strings.Contains(out, teamID+": not audited: ") ||
		last != "1 of 2 subscriptions could not be audited (see above); in the others, every expected reminder was delivered once." {
		t.Errorf("bot audit with %s unreadable: exit %d, last line %q; want 3 and the subscription named not audited:\n%s", team, code, last, out)
	}
}

// A SLACK_SIGNING_SECRET that is not the app's refuses every request Slack
// signs; the log says which variable to check, once for the lot.
func TestWrongSigningSecretIsNamedInTheLog(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := start(t, w.dir, w.selfServiceEnv())
	addr := p.ready()
	form := "command=%2Fmeetingbot&text=on&user_id=" + bobID + "&team_id=" + slacktest.TeamID + "&api_app_id=" + slacktest.AppID
	for range 3 {
		status, _, err := postSigned(context.Background(), "http://"+addr+"/slack/commands", "application/x-www-form-urlencoded", []byte(form), "another-apps-signing-secret")
		if err != nil || status != 401 {
			t.Fatalf("POST /slack/commands signed with another secret = %d, %v; want 401", status, err)
		}
	}
	eventually(t, 10*time.Second, "the refusal in the log", func() bool { return strings.Contains(p.out.String(), "refused requests") })
	out := p.out.String()
	if n := strings.Count(out, "SLACK_SIGNING_SECRET is not this app's Signing Secret"); n != 1 {
		t.Errorf("the log names SLACK_SIGNING_SECRET %d times for 3 refusals within a minute, want once:\n%s", n, out)
	}
}
