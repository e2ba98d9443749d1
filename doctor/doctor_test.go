package doctor_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/doctor"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// alice is the calendar the tests read.
const alice = "alice@example.com"

// closedURL is an address where nothing listens: a port taken and let go.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// doctorLines parses env over a working configuration against the
// emulators, runs doctor and returns its lines and how many failed.
func doctorLines(t *testing.T, cal *calendartest.Server, slack *slacktest.Server, overrides ...string) ([]string, int) {
	t.Helper()
	env := map[string]string{
		"SLACK_BOT_TOKEN":         slacktest.Token,
		"SLACK_API_URL":           slack.URL(),
		"GOOGLE_CREDENTIALS_JSON": string(cal.ServiceAccountJSON()),
		"GOOGLE_API_ENDPOINT":     cal.Endpoint(),
		"CALENDARS":               alice,
		"DATABASE_PATH":           t.TempDir() + "/reminders.db",
		"HTTP_ADDR":               closedAddr(t),
	}
	for _, o := range overrides {
		k, v, _ := strings.Cut(o, "=")
		env[k] = v
	}
	cfg, err := config.Parse(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("Parse = %v", err)
	}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	failed, err := doctor.Run(ctx, cfg, &out, false)
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	return strings.Split(strings.TrimSpace(out.String()), "\n"), failed
}

// lineOf returns the line of the check named name, or "".
func lineOf(lines []string, name string) string {
	for _, l := range lines {
		for _, mark := range []string{"✓ ", "✗ ", "… "} {
			if strings.HasPrefix(l, mark+name+": ") {
				return l
			}
		}
	}
	return ""
}

// world is the emulators, with Alice's calendar shared with the service
// account and Alice in Slack.
func world(t *testing.T) (*calendartest.Server, *slacktest.Server) {
	cal, slack := calendartest.NewServer(), slacktest.NewServer()
	t.Cleanup(cal.Close)
	t.Cleanup(slack.Close)
	cal.AddCalendar(alice)
	cal.Share(alice, cal.ServiceAccountEmail())
	slack.AddUser(slacktest.User{ID: "U0ALICE001", Name: "alice", Email: alice})
	return cal, slack
}

// Slack that does not answer is not Slack refusing the token: the token's
// line names the URL that failed, and the lines that need the token say
// Slack did not answer, with the network to check, not the token.
func TestDoctorSlackDidNotAnswer(t *testing.T) {
	cal, slack := world(t)
	dead := "http://" + closedAddr(t) + "/api/"
	lines, failed := doctorLines(t, cal, slack, "SLACK_API_URL="+dead)
	for name, want := range map[string]string{
		"Slack token":             "✗ Slack token: Slack did not answer at " + dead + "auth.test: ",
		"Slack scopes":            "✗ Slack scopes: not checked: Slack did not answer at " + dead + "; fix: check the network and SLACK_API_URL",
		"destination of " + alice: "✗ destination of " + alice + ": not checked: Slack did not answer at " + dead + "; fix: check the network",
	} {
		if l := lineOf(lines, name); !strings.HasPrefix(l, want) || strings.Contains(l, "Slack refused") {
			t.Errorf("doctor, Slack down: %q = %q, want it to start %q and not say refused", name, l, want)
		}
	}
	if failed != 3 {
		t.Errorf("doctor, Slack down: %d failed, want 3:\n%s", failed, strings.Join(lines, "\n"))
	}
}

// A Calendar read that fails at the credentials' token_uri names that URL
// and its fix, not GOOGLE_API_ENDPOINT, which answered nothing wrong.
func TestDoctorTokenURIDidNotAnswer(t *testing.T) {
	cal, slack := world(t)
	dead := "http://" + closedAddr(t) + "/token"
	key := strings.Replace(string(cal.ServiceAccountJSON()), cal.TokenURL(), dead, 1)
	lines, _ := doctorLines(t, cal, slack, "GOOGLE_CREDENTIALS_JSON="+key)
	l := lineOf(lines, "calendar "+alice)
	want := "✗ calendar " + alice + ": Google's token endpoint did not answer at " + dead + " (token_uri of the credentials): "
	if !strings.HasPrefix(l, want) || !strings.Contains(l, "fix: run bot doctor again; if it keeps failing, check that this host reaches "+dead) ||
		strings.Contains(l, "GOOGLE_API_ENDPOINT") {
		t.Errorf("doctor, token_uri down: %q, want it to start %q, name %s in the fix and not blame GOOGLE_API_ENDPOINT", l, want, dead)
	}

	lines, _ = doctorLines(t, cal, slack, "GOOGLE_API_ENDPOINT=http://"+closedAddr(t)+"/calendar/v3/")
	if l := lineOf(lines, "calendar "+alice); !strings.HasPrefix(l, "✗ calendar "+alice+": Google Calendar did not answer at http://127.0.0.1:") ||
		!strings.Contains(l, "check GOOGLE_API_ENDPOINT") {
		t.Errorf("doctor, Calendar down: %q, want the Calendar URL and GOOGLE_API_ENDPOINT to check", l)
	}
}

// Before the first deploy nothing answers at PUBLIC_URL, and no bot runs
// beside doctor: the check waits for the deploy (not a failure) and says
// where to run doctor then. Where the bot runs (its /healthz answers on
// HTTP_ADDR), a PUBLIC_URL that does not reach it fails.
func TestDoctorPublicURLBeforeTheFirstDeploy(t *testing.T) {
	cal, slack := world(t)
	public := "https://" + closedAddr(t)
	lines, failed := doctorLines(t, cal, slack, "PUBLIC_URL="+public)
	l := lineOf(lines, "PUBLIC_URL")
	if want := "… PUBLIC_URL: no bot answers at " + public + "/healthz yet, nor on HTTP_ADDR here: this check waits for the first deploy"; !strings.HasPrefix(l, want) ||
		!strings.Contains(l, `then: deploy, then run bot doctor where the bot runs, with its environment: fly ssh console -C "/usr/local/bin/entrypoint doctor" (Fly.io), kubectl exec deploy/meetingbot -- bot doctor (Kubernetes)`) {
		t.Errorf("doctor before the first deploy: %q, want it to start %q and say where to run doctor next", l, want)
	}
	if last := lines[len(lines)-1]; failed != 0 || !strings.HasSuffix(last, " 0 failed, 1 waiting for the first deploy") {
		t.Errorf("doctor before the first deploy: %d failed, last line %q; want 0 failed, 1 waiting:\n%s", failed, last, strings.Join(lines, "\n"))
	}

	bot := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) }))
	defer bot.Close()
	lines, failed = doctorLines(t, cal, slack, "PUBLIC_URL="+public, "HTTP_ADDR="+strings.TrimPrefix(bot.URL, "http://"))
	if l := lineOf(lines, "PUBLIC_URL"); !strings.HasPrefix(l, "✗ PUBLIC_URL: "+public+"/healthz cannot be reached: ") || failed != 1 {
		t.Errorf("doctor beside a running bot: %q, %d failed; want PUBLIC_URL failed", l, failed)
	}
}
