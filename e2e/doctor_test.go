package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// serviceAccount is the client_email of calendartest's service-account key.
const serviceAccount = "bot@meetingbot-test.iam.gserviceaccount.com"

// doctor runs `bot doctor args…` with env and returns its exit status and
// output lines.
func doctorOf(t *testing.T, w *world, env map[string]string, args ...string) (int, []string) {
	t.Helper()
	p := start(t, w.dir, env, append([]string{"doctor"}, args...)...)
	code, _ := p.wait(2 * time.Minute)
	return code, strings.Split(strings.TrimSpace(p.out.String()), "\n")
}

// line returns the output line of the check named name, or "".
func line(lines []string, name string) string {
	for _, l := range lines {
		for _, mark := range []string{"✓ ", "✗ ", "… "} {
			if strings.HasPrefix(l, mark+name+": ") {
				return l
			}
		}
	}
	return ""
}

// TestDoctorPasses runs bot doctor on a configuration that works: every
// check passes, one line each, exit 0; and nothing was changed: no
// message, no push channel, no database file.
func TestDoctorPasses(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.cal.Share(alice, serviceAccount)
	w.cal.Share(team, serviceAccount)
	env := w.env("CALENDARS=" + alice + "," + teamID + ",room@example.com=" + engID)
	w.cal.AddCalendar("room@example.com")
	code, lines := doctorOf(t, w, env)
	if code != 0 {
		t.Fatalf("bot doctor = exit %d, want 0:\n%s", code, strings.Join(lines, "\n"))
	}
	for _, name := range []string{"Slack token", "Slack scopes", "calendar " + alice, "calendar " + team, "calendar room@example.com",
		"destination of " + alice, "destination of " + teamID, "destination of room@example.com=" + engID, "database", "Calendar daily projection"} {
		if l := line(lines, name); !strings.HasPrefix(l, "✓ ") {
			t.Errorf("bot doctor: check %q = %q, want ✓", name, l)
		}
	}
	if got, want := lines[len(lines)-1], "10 checks: 10 passed, 0 failed"; got != want {
		t.Errorf("bot doctor: last line %q, want %q", got, want)
	}
	for _, want := range []string{
		"✓ Slack token: the bot user meetingbot (U0BOT00001) in Slack Test (T0TEAM0001)",
		"✓ Slack scopes: the token has the 9 scopes this configuration needs: chat:write, im:write, users:read, users:read.email, channels:read, groups:read, channels:history, groups:history, im:history",
		"✓ calendar " + alice + ": readable with event details (access reader)",
		"✓ destination of " + teamID + ": reminders can be posted: #eng",
		"✓ database: SQLite at " + env["DATABASE_PATH"] + ": no ledger yet; the bot creates it",
		// TICK_INTERVAL=1s: a sync of each calendar every second.
		"✓ Calendar daily projection: about 259,227 Calendar requests a day for 3 calendars of CALENDARS (86,409 each: 86,400 resyncs, 8 checks before reminders, 1 full sync), 25.9% of CALENDAR_DAILY_REQUEST_THRESHOLD (1,000,000); " +
			"without push each calendar costs a sync every CALENDAR_RESYNC_INTERVAL (1s), with PUBLIC_URL about 61 a day",
	} {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, want) }) {
			t.Errorf("bot doctor printed no line starting %q:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	if n := len(w.slack.CallsTo("chat.postMessage")); n != 0 {
		t.Errorf("bot doctor made %d chat.postMessage calls, want none", n)
	}
	if len(w.cal.Channels()) != 0 {
		t.Errorf("bot doctor opened push channels: %v", w.cal.Channels())
	}
	if _, err := os.Stat(env["DATABASE_PATH"]); !os.IsNotExist(err) {
		t.Errorf("bot doctor created %s (stat: %v), want nothing written", env["DATABASE_PATH"], err)
	}

	// The same as JSON.
	p := start(t, w.dir, env, "doctor", "--json")
	if code, _ := p.wait(time.Minute); code != 0 {
		t.Fatalf("bot doctor --json = exit %d:\n%s", code, p.out.String())
	}
	var report struct {
		OK     bool `json:"ok"`
		Checks []struct {
			Name, Detail, Fix string
			OK                bool
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(p.out.String()), &report); err != nil {
		t.Fatalf("bot doctor --json printed %q: %v", p.out.String(), err)
	}
	if !report.OK || len(report.Checks) != 10 || report.Checks[0].Name != "Slack token" || !report.Checks[0].OK {
		t.Errorf("bot doctor --json = %+v, want ok and 10 checks, the Slack token's first", report)
	}
}

// TestDoctorFindsWhatIsWrong breaks one thing at a time: its check fails
// with the fix, exit 1, and the others still run.
func TestDoctorFindsWhatIsWrong(t *testing.T) {
	t.Parallel()
	notSQLite := func(w *world, env map[string]string) {
		if err := os.WriteFile(env["DATABASE_PATH"], []byte("not a database"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		setup   func(w *world, env map[string]string)
		env     []string
		check   string // the check that fails
		want    string // its line starts so
		wantFix string // and its fix says
	}{
		{"a scope missing", func(w *world, _ map[string]string) {
			w.slack.SetScopes(slices.DeleteFunc(slices.Clone(slacktest.DefaultScopes), func(s string) bool { return s == "users:read.email" })...)
		}, nil, "Slack scopes", "✗ Slack scopes: the token lacks users:read.email; fix: add users:read.email for users.lookupByEmail", "reinstall it to the workspace"},
		{"a token Slack rejects", nil, []string{"SLACK_BOT_TOKEN=xoxb-1-2-rejected"}, "Slack token", "✗ Slack token: Slack refused it",
			"copy the Bot User OAuth Token (xoxb-…) from your app's OAuth & Permissions page"},
		{"a calendar not shared", func(w *world, _ map[string]string) { w.cal.Share(alice, "someone@example.com") }, nil,
			"calendar " + alice, "✗ calendar " + alice + ": cannot be read", "share " + alice + "'s calendar with " + serviceAccount + " (See all event details)"},
		{"a calendar shown free/busy only", func(w *world, _ map[string]string) { w.cal.ShareFreeBusy(alice, serviceAccount) }, nil,
			"calendar " + alice, "✗ calendar " + alice + ": shows only free/busy", "External sharing options"},
		{"a channel that does not exist", nil, []string{"CALENDARS=" + alice + "=#nowhere"}, "destination of " + alice + "=#nowhere",
			"✗ destination of " + alice + "=#nowhere: Slack refuses #nowhere", "check the name in CALENDARS"},
		{"an email not in Slack", nil, []string{"CALENDARS=" + team}, "destination of " + team,
			"✗ destination of " + team + ": Slack refuses DM to " + team, team},
		{"a file that is not SQLite", notSQLite, nil, "database", "✗ database: cannot be used", "is not the bot's database"},
		{"an app-level token Slack rejects", nil, []string{"SLACK_APP_TOKEN=xapp-1-A0-rejected"}, "Slack app-level token (Socket Mode)",
			"✗ Slack app-level token (Socket Mode): Slack refused it (invalid_auth)", "connections:write"},
		{"a database that cannot be reached", nil, []string{"DATABASE_PATH=", "DATABASE_URL=postgres://meetingbot:secret-pw@127.0.0.1:1/meetingbot?connect_timeout=2"},
			"database", "✗ database: cannot be reached", "check the host and port in DATABASE_URL"},
		// A sync every second of one calendar: 86,409 requests a day.
		{"a day past 80% of the daily threshold", nil, []string{"CALENDAR_DAILY_REQUEST_THRESHOLD=100000"}, "Calendar daily projection",
			"✗ Calendar daily projection: about 86,409 Calendar requests a day for 1 calendar of CALENDARS", "turn push notifications on with PUBLIC_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.cal.AddCalendar(team)
			env := w.env(tt.env...)
			if tt.setup != nil {
				tt.setup(w, env)
			}
			code, lines := doctorOf(t, w, env)
			l := line(lines, tt.check)
			if code != 1 || !strings.HasPrefix(l, tt.want) || !strings.Contains(l, "; fix: ") || !strings.Contains(l[strings.Index(l, "; fix: "):], tt.wantFix) {
				t.Fatalf("bot doctor = exit %d, check %q = %q; want exit 1 and a line starting %q whose fix says %q; all:\n%s",
					code, tt.check, l, tt.want, tt.wantFix, strings.Join(lines, "\n"))
			}
			if !strings.HasSuffix(lines[len(lines)-1], "1 failed") && tt.name != "a token Slack rejects" {
				t.Errorf("bot doctor: last line %q, want one failure", lines[len(lines)-1])
			}
			if strings.Contains(strings.Join(lines, "\n"), "secret-pw") {
				t.Errorf("bot doctor printed DATABASE_URL's password")
			}
		})
	}
}

// TestDoctorDatabase checks a database the bot migrated, on SQLite and on
// PostgreSQL: writable and migrated, and left as it was (the probe's table
// rolled back, no replica registered); and a PostgreSQL database that does
// not exist, whose fix is createdb.
func TestDoctorDatabase(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.env()
	s, err := sqlite.Open(context.Background(), env["DATABASE_PATH"])
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	code, lines := doctorOf(t, w, env)
	if want := "✓ database: SQLite at " + env["DATABASE_PATH"] + ": writable and migrated"; code != 0 || line(lines, "database") != want {
		t.Errorf("bot doctor on a migrated SQLite file = exit %d, %q; want 0 and %q", code, line(lines, "database"), want)
	}
	if tables := sqliteTables(t, env["DATABASE_PATH"]); slices.Contains(tables, "meetingbot_doctor_probe") {
		t.Errorf("bot doctor left its probe table in the database: %v", tables)
	}

	base := pgtest.Server(t)
	pg := pgtest.URL(t)
	code, lines = doctorOf(t, w, w.env("DATABASE_PATH=", "DATABASE_URL="+pg))
	if l := line(lines, "database"); code != 0 || !strings.HasPrefix(l, "✓ database: PostgreSQL") || !strings.Contains(l, "the bot creates its tables") {
		t.Errorf("bot doctor on an empty PostgreSQL schema = exit %d, %q; want 0 and the tables made at start", code, l)
	}
	u, _ := url.Parse(base)
	u.Path = "/meetingbot_no_such_database"
	code, lines = doctorOf(t, w, w.env("DATABASE_PATH=", "DATABASE_URL="+u.String()))
	if l := line(lines, "database"); code != 1 || !strings.HasPrefix(l, "✗ database: the database does not exist") || !strings.Contains(l, "createdb") {
		t.Errorf("bot doctor on a database that does not exist = exit %d, %q; want 1 and createdb", code, l)
	}
}

// sqliteTables lists the tables of the SQLite file at path.
func sqliteTables(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// TestDoctorPublicURL fetches PUBLIC_URL/healthz over https with the
// certificate checked: through a TLS proxy to the running bot it passes;
// a URL that reaches something else fails with the fix, doctor running
// where the bot runs (its HTTP_ADDR).
func TestDoctorPublicURL(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	bot := start(t, w.dir, w.env())
	addr := bot.ready()
	target, _ := url.Parse("http://" + addr)
	proxy := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(target))
	defer proxy.Close()
	other := httptest.NewTLSServer(http.NotFoundHandler())
	defer other.Close()
	// The doctor's process trusts the test servers' certificate, as a
	// host trusts a public one.
	certFile := filepath.Join(t.TempDir(), "ca.pem")
	cert := proxy.TLS.Certificates[0].Certificate[0]
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert}), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		url, want string
		code      int
	}{
		{proxy.URL, "✓ PUBLIC_URL: " + proxy.URL + "/healthz answers from outside: ok", 0},
		{other.URL, "✗ PUBLIC_URL: " + other.URL + "/healthz answered 404 Not Found, not this bot's /healthz; fix: PUBLIC_URL must be the base URL that reaches HTTP_ADDR", 1},
	} {
		env := w.env("PUBLIC_URL="+tt.url, "SSL_CERT_FILE="+certFile, "DATABASE_PATH="+filepath.Join(t.TempDir(), "doctor.db"), "HTTP_ADDR="+addr)
		code, lines := doctorOf(t, w, env)
		if l := line(lines, "PUBLIC_URL"); code != tt.code || !strings.HasPrefix(l, tt.want) {
			t.Errorf("bot doctor with PUBLIC_URL=%s = exit %d, %q; want %d and a line starting %q", tt.url, code, l, tt.code, tt.want)
		}
	}
}

// With people's own Google accounts and no service account, doctor checks
// the OAuth client's redirect URI instead of calendars: listed, it passes;
// a client registered for another URL fails with where to add it.
func TestDoctorGoogleOAuthClient(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	addr := freeAddr(t)
	front := httpsFront(t, addr)
	env := w.connectEnv(front, addr)
	code, lines := doctorOf(t, w, env)
	want := "✓ Google OAuth client: client "
	if l := line(lines, "Google OAuth client"); !strings.HasPrefix(l, want) || !strings.HasSuffix(l, "lists the redirect URI "+front.URL+"/google/oauth/callback") {
		t.Errorf("bot doctor, connect on: %q (exit %d); want a line starting %q:\n%s", l, code, want, strings.Join(lines, "\n"))
	}
	env["GOOGLE_OAUTH_CLIENT_JSON"] = string(w.cal.OAuthClientJSON("https://elsewhere.example.com/google/oauth/callback"))
	code, lines = doctorOf(t, w, env)
	l := line(lines, "Google OAuth client")
	if code != 1 || !strings.HasPrefix(l, "✗ Google OAuth client: ") || !strings.Contains(l, "does not list the redirect URI "+front.URL+"/google/oauth/callback") ||
		!strings.Contains(l, "fix: add "+front.URL+"/google/oauth/callback under Authorized redirect URIs") {
		t.Errorf("bot doctor, client for another URL = exit %d, %q; want 1 and the URI to add", code, l)
	}
}

// With people's own Slack users on (SLACK_CLIENT_ID), doctor asks Slack's
// authorization page whether the app takes the redirect URL
// PUBLIC_URL/slack/oauth/callback: listed in the app, it passes; not
// listed, it fails with where to list it.
func TestDoctorSlackOAuthClient(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	addr := freeAddr(t)
	front := httpsFront(t, addr)
	env := w.connectEnv(front, addr, "SLACK_CLIENT_ID="+slacktest.ClientID, "SLACK_CLIENT_SECRET="+slacktest.ClientSecret)
	uri := front.URL + "/slack/oauth/callback"
	code, lines := doctorOf(t, w, env)
	l := line(lines, "Slack OAuth client")
	if !strings.HasPrefix(l, "✗ Slack OAuth client: Slack's authorization page refuses client "+slacktest.ClientID+" with the redirect URL "+uri) ||
		!strings.Contains(l, "fix: list "+uri+" under the app's Redirect URLs") || code != 1 {
		t.Errorf("bot doctor, the redirect URL not in the app = exit %d, %q; want 1 and where to list it:\n%s", code, l, strings.Join(lines, "\n"))
	}
	w.slack.RegisterRedirect(uri)
	_, lines = doctorOf(t, w, env)
	if l, want := line(lines, "Slack OAuth client"), "✓ Slack OAuth client: Slack's authorization page takes client "+slacktest.ClientID+" with the redirect URL "+uri; l != want {
		t.Errorf("bot doctor, the redirect URL in the app: %q, want %q", l, want)
	}
}
