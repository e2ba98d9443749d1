package e2e

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

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
		status, _, err := slacktest.PostSigned(context.Background(), "http://"+addr+"/slack/commands", "application/x-www-form-urlencoded", []byte(form), "another-apps-signing-secret")
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
