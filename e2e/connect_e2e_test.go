package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
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

// End to end with people's own Google accounts: the built bot with
// GOOGLE_OAUTH_CLIENT_JSON and no service account, behind an https front
// as on Fly (an httptest TLS server proxying to HTTP_ADDR), Google's OAuth
// server and Calendar emulated by calendartest, a person's browser played
// by an HTTP client with a cookie jar.

// httpsFront serves https on loopback and proxies every request to the
// bot's plain HTTP_ADDR, as a platform's TLS-terminating edge does.
func httpsFront(t *testing.T, addr string) *httptest.Server {
	t.Helper()
	target, _ := url.Parse("http://" + addr)
	front := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(target))
	t.Cleanup(front.Close)
	return front
}

// connectEnv is w's environment with self-service, people's own Google
// accounts, PUBLIC_URL at front, and no service account or CALENDARS.
func (w *world) connectEnv(front *httptest.Server, addr string, overrides ...string) map[string]string {
	key := make([]byte, 32)
	rand.Read(key)
	env := w.selfServiceEnv(append([]string{
		"HTTP_ADDR=" + addr,
		"PUBLIC_URL=" + front.URL,
		"CALENDAR_RESYNC_INTERVAL=1s",
		"TOKEN_ENCRYPTION_KEY=" + base64.StdEncoding.EncodeToString(key),
		"GOOGLE_OAUTH_CLIENT_JSON=" + string(w.cal.OAuthClientJSON(front.URL+"/google/oauth/callback")),
	}, overrides...)...)
	delete(env, "GOOGLE_CREDENTIALS_JSON")
	// Google's notifications reach the bot through the front too.
	w.cal.SetNotifyClient(front.Client())
	return env
}

// Lisa, the other person of the connection tests.
const (
	lisa   = "lisa@example.com"
	lisaDM = "D0LISA0001"
)

var startLink = regexp.MustCompile(`<(https://[^|>]+/(?:google|slack)/oauth/start\?t=[^|>]+)\|`)

// browse opens the link of a /meetingbot connect reply in a browser of
// its own and returns the page it ends on.
func browse(t *testing.T, front *httptest.Server, reply string) (int, string) {
	t.Helper()
	m := startLink.FindStringSubmatch(reply)
	if m == nil {
		t.Fatalf("/meetingbot connect = %q, want a link to /google/oauth/start", reply)
	}
	jar, _ := cookiejar.New(nil)
	b := &http.Client{Jar: jar, Transport: front.Client().Transport, Timeout: 20 * time.Second}
	resp, err := b.Get(m[1])
	if err != nil {
		t.Fatalf("GET %s: %v", m[1], err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// Bob, whose calendar nobody shared and with no service account on the
// bot, connects his Google account in the browser and is reminded from
// his own calendar; after a restart the connection is still there and
// opens his calendar's push channel; Google revokes the grant mid-run,
// and he gets one DM with a Reconnect button while the gauge counts the
// broken connection; he reconnects, then disconnects, which revokes the
// grant and stops the push channel opened with his account.
func TestConnectOwnGoogleAccount(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	addr := freeAddr(t)
	front := httpsFront(t, addr)
	env := w.connectEnv(front, addr, "REMINDER_OFFSETS=5s")
	p := start(t, w.dir, env)
	p.ready()

	reply := w.slash(t, addr, bobID, bobDM, "on")
	if !strings.Contains(reply, "/meetingbot connect") {
		t.Errorf("/meetingbot on before connecting = %q, want to be told to connect", reply)
	}
	status, page := browse(t, front, w.slash(t, addr, bobID, bobDM, "connect"))
	if status != http.StatusOK || !strings.Contains(page, "Connected bob@example.com: you can close this tab.") {
		t.Fatalf("the flow ended with %d:\n%s", status, page)
	}
	eventually(t, 10*time.Second, "the DM saying Bob is connected", func() bool {
		for _, m := range w.inChannel(bobDM) {
			if strings.Contains(m.Text, "Connected bob@example.com") {
				return true
			}
		}
		return false
	})

	begins := at(12 * time.Second)
	w.meetingIn(t, bob, "standup", "Bob's standup", begins)
	if reply := w.slash(t, addr, bobID, bobDM, "on"); !strings.HasPrefix(reply, "On. Next reminder: *Bob's standup*") {
		t.Fatalf("/meetingbot on after connecting = %q, want On and the next reminder", reply)
	}
	m := w.waitMessage(t, "Bob's standup", 30*time.Second)
	if m.Channel != bobDM || !m.Posted.Before(begins) {
		t.Errorf("reminder in %s at %v, want in %s before %v", m.Channel, m.Posted, bobDM, begins)
	}
	// A restart: the mirror opens the push channels of the calendars
	// subscribed when it starts, Bob's with his own account.
	p.signal(syscall.SIGTERM)
	p.wait(15 * time.Second)
	p = start(t, w.dir, env)
	p.ready()
	eventually(t, 20*time.Second, "a push channel on Bob's calendar", func() bool {
		for _, ch := range w.cal.Channels() {
			if ch.CalendarID == bob {
				return true
			}
		}
		return false
	})
	if v := metric(t, addr, `meetingbot_connections{state="active"}`); v != 1 {
		t.Errorf(`meetingbot_connections{state="active"} = %v, want 1`, v)
	}

	// Lisa connects hers too: Bob's revocation must not touch her
	// reminders.
	w.cal.AddCalendar(lisa)
	if status, page := browse(t, front, w.slash(t, addr, lisaID, lisaDM, "connect")); status != http.StatusOK {
		t.Fatalf("Lisa's flow ended with %d:\n%s", status, page)
	}
	if reply := w.slash(t, addr, lisaID, lisaDM, "on"); !strings.HasPrefix(reply, "On.") {
		t.Fatalf("Lisa's /meetingbot on = %q", reply)
	}
	lisas := at(14 * time.Second)
	w.meetingIn(t, lisa, "review", "Lisa's review", lisas)

	// Bob removes the bot from his Google account.
	w.cal.RevokeGrants(bob)
	stopped := func() []slacktest.Message {
		var out []slacktest.Message
		for _, m := range w.inChannel(bobDM) {
			if strings.Contains(m.Text, "Your reminders from bob@example.com stopped") {
				out = append(out, m)
			}
		}
		return out
	}
	eventually(t, 20*time.Second, "the DM saying Bob's reminders stopped", func() bool { return len(stopped()) == 1 })
	if b := string(stopped()[0].Blocks); !strings.Contains(b, "reconnect_google") {
		t.Errorf("the DM has no Reconnect button: %s", b)
	}
	eventually(t, 20*time.Second, "the gauge counting the broken connection", func() bool {
		return metric(t, addr, `meetingbot_connections{state="broken"}`) == 1
	})
	time.Sleep(5 * time.Second) // past 3 ticks: still one DM, and Bob's paused reminders fail no sweep
	if n := len(stopped()); n != 1 {
		t.Errorf("DMs saying the reminders stopped = %d, want 1", n)
	}
	if status, body := httpGet("http://" + addr + "/healthz"); status != http.StatusOK {
		t.Errorf("GET /healthz with Bob's connection stopped = %d %q, want 200: nobody else is affected", status, body)
	}
	if m := w.waitMessage(t, "Lisa's review", 20*time.Second); m.Channel != lisaDM || !m.Posted.Before(lisas) {
		t.Errorf("Lisa's reminder during Bob's revocation in %s at %v, want in %s before %v", m.Channel, m.Posted, lisaDM, lisas)
	}

	status, page = browse(t, front, w.slash(t, addr, bobID, bobDM, "connect"))
	if status != http.StatusOK || !strings.Contains(page, "Connected bob@example.com") {
		t.Fatalf("reconnecting ended with %d:\n%s", status, page)
	}
	if reply := w.slash(t, addr, bobID, bobDM, "disconnect"); !strings.HasPrefix(reply, "Disconnected bob@example.com") {
		t.Errorf("/meetingbot disconnect = %q", reply)
	}
	if n := w.cal.Grants(bob); n != 0 {
		t.Errorf("Bob's live grants after disconnecting = %d, want 0", n)
	}
	for _, ch := range w.cal.Channels() {
		if ch.CalendarID == bob {
			t.Errorf("a push channel on Bob's calendar is still open after disconnecting: %s", ch.ID)
		}
	}
	// With no service account nothing reads Bob's calendar now: his
	// reminders are paused, and the bot stays healthy past 3 ticks.
	time.Sleep(5 * time.Second)
	if status, body := httpGet("http://" + addr + "/healthz"); status != http.StatusOK {
		t.Errorf("GET /healthz after Bob disconnected = %d %q, want 200: his reminders stop, nobody else's", status, body)
	}
}

// Bob lets the bot set his Slack status: /meetingbot status on, Slack's
// authorize page, the callback, a DM. At his meeting's start his status
// says he is in a meeting, until the end of the back-to-back meeting
// after it, when Slack clears it; Lisa's own status is left alone.
// Slack's tokens_revoked then deletes Bob's connection.
func TestSlackStatusDuringMeetings(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	addr := freeAddr(t)
	front := httpsFront(t, addr)
	key := make([]byte, 32)
	rand.Read(key)
	w.slack.RegisterRedirect(front.URL + "/slack/oauth/callback")
	w.slack.SignIn(bobID)
	env := w.selfServiceEnv("HTTP_ADDR="+addr, "PUBLIC_URL="+front.URL, "TOKEN_ENCRYPTION_KEY="+base64.StdEncoding.EncodeToString(key),
		"SLACK_CLIENT_ID="+slacktest.ClientID, "SLACK_CLIENT_SECRET="+slacktest.ClientSecret, "CALENDAR_RESYNC_INTERVAL=1s")
	w.cal.SetNotifyClient(front.Client())
	p := start(t, w.dir, env)
	p.ready()

	status, page := browse(t, front, w.slash(t, addr, bobID, bobDM, "status on"))
	if status != http.StatusOK || !strings.Contains(page, "Connected your Slack user: you can close this tab.") {
		t.Fatalf("the Slack flow ended with %d:\n%s", status, page)
	}
	w.slack.SignIn(lisaID)
	if status, page := browse(t, front, w.slash(t, addr, lisaID, "D0LISA0001", "status on")); status != http.StatusOK {
		t.Fatalf("Lisa's Slack flow ended with %d:\n%s", status, page)
	}
	own := slacktest.Status{Text: "Vacation", Emoji: ":palm_tree:"}
	w.slack.SetStatus(lisaID, own)

	first := at(8 * time.Second)
	second := first.Add(6 * time.Second)
	end := second.Add(6 * time.Second)
	w.cal.AddCalendar("lisa@example.com")
	for _, m := range []struct {
		cal, id    string
		start, end time.Time
	}{{bob, "one", first, second}, {bob, "two", second, end}, {"lisa@example.com", "lisas", first, end}} {
		if err := w.cal.Put(m.cal, calendartest.NewEvent(m.id, "Meeting "+m.id, m.start, m.end)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "Bob's status set at his meeting's start", func() bool {
		return w.slack.StatusOf(bobID).Emoji == ":spiral_calendar_pad:"
	})
	var set slacktest.StatusSet
	for _, s := range w.slack.StatusSets() {
		if s.User == bobID {
			set = s
			break
		}
	}
	if set.At.Before(first) || set.At.After(first.Add(time.Second)) {
		t.Errorf("Bob's status set at %v, want within a second of the start %v", set.At, first)
	}
	if got := w.slack.StatusOf(bobID); got.Text != "In a meeting" || !got.Expiration.Equal(end) {
		t.Errorf("Bob's status = %+v, want In a meeting until the back-to-back meeting's end %v", got, end)
	}
	sleepUntil(second.Add(2 * time.Second))
	if n := len(w.slack.StatusSets()); n != 1 {
		t.Errorf("statuses set by the second meeting's start = %d, want 1 (no flicker between back-to-back meetings)", n)
	}
	if got := w.slack.StatusOf(lisaID); got != own {
		t.Errorf("Lisa's status = %+v, want her own %+v left alone", got, own)
	}
	sleepUntil(end.Add(time.Second))
	if got := w.slack.StatusOf(bobID); got != (slacktest.Status{}) {
		t.Errorf("Bob's status after the meetings = %+v, want cleared by its expiration", got)
	}

	// A meeting cancelled while its status shows: the bot clears it.
	third := at(4 * time.Second)
	if err := w.cal.Put(bob, calendartest.NewEvent("three", "Meeting three", third, third.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "Bob's status set for the third meeting", func() bool {
		return w.slack.StatusOf(bobID).Expiration.Equal(third.Add(time.Hour))
	})
	if err := w.cal.Delete(bob, "three"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "Bob's status cleared after the meeting was cancelled", func() bool {
		return w.slack.StatusOf(bobID) == (slacktest.Status{})
	})

	// Out of office, which Bob turns on: "Out of office" until its end;
	// his focus time beside it sets nothing.
	if reply := w.slash(t, addr, bobID, bobDM, "status ooo"); !strings.Contains(reply, "Out of office") {
		t.Errorf("/meetingbot status ooo = %q", reply)
	}
	away := at(5 * time.Second)
	for _, ev := range []struct{ id, kind string }{{"away", "outOfOffice"}, {"focus", "focusTime"}} {
		e := calendartest.NewEvent(ev.id, ev.id, away, away.Add(2*time.Hour))
		e.EventType = ev.kind
		if err := w.cal.Put(bob, e); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 20*time.Second, "Bob's status out of office", func() bool {
		return w.slack.StatusOf(bobID) == slacktest.Status{Text: "Out of office", Emoji: ":palm_tree:", Expiration: away.Add(2 * time.Hour)}
	})
	eventually(t, 10*time.Second, "the DM saying status is on", func() bool {
		for _, m := range w.inChannel(bobDM) {
			if strings.HasPrefix(m.Text, "Status on:") {
				return true
			}
		}
		return false
	})
	if n := w.slack.UserTokens(bobID); n != 1 {
		t.Errorf("Bob's user tokens = %d, want 1", n)
	}
	sendEvent(t, addr, "Ev0REVOKEBOB", map[string]any{"type": "tokens_revoked", "tokens": map[string]any{"oauth": []string{bobID}, "bot": []string{}}, "event_ts": "1"})
	eventually(t, 10*time.Second, "the connection deleted", func() bool {
		return strings.Contains(w.slash(t, addr, bobID, bobDM, "status off"), "I don't set your status")
	})
}

// connectionsOf reads the connections in the database of a stopped bot.
func connectionsOf(t *testing.T, path string) map[string]meetingbot.Connection {
	t.Helper()
	st, err := sqlite.OpenExisting(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cs, err := st.Connections(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]meetingbot.Connection{}
	for _, c := range cs {
		out[c.Account] = c
	}
	return out
}

// A key rotation done wrong, and bot audit beside it. Lisa's grant is
// revoked, so bot audit names her paused reminders; run with a new key
// first and the old one after, it leaves every token as it was (the
// running bot seals them again, not the audit). The bot started with the
// new key alone says at start-up how many connections it cannot read,
// and Bob, whose token it can no longer open, gets one DM asking him to
// reconnect, while /healthz stays ok.
func TestConnectionKeysAndAudit(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	addr := freeAddr(t)
	front := httpsFront(t, addr)
	env := w.connectEnv(front, addr, "REMINDER_OFFSETS=5s")
	old := env["TOKEN_ENCRYPTION_KEY"]
	p := start(t, w.dir, env)
	p.ready()
	w.cal.AddCalendar(lisa)
	for _, who := range []struct{ id, dm string }{{bobID, bobDM}, {lisaID, lisaDM}} {
		if status, page := browse(t, front, w.slash(t, addr, who.id, who.dm, "connect")); status != http.StatusOK {
			t.Fatalf("%s's flow ended with %d:\n%s", who.id, status, page)
		}
		if reply := w.slash(t, addr, who.id, who.dm, "on"); !strings.HasPrefix(reply, "On.") {
			t.Fatalf("%s's /meetingbot on = %q", who.id, reply)
		}
	}
	w.cal.RevokeGrants(lisa)
	eventually(t, 20*time.Second, "the DM saying Lisa's reminders stopped", func() bool {
		for _, m := range w.inChannel(lisaDM) {
			if strings.Contains(m.Text, "Your reminders from lisa@example.com stopped") {
				return true
			}
		}
		return false
	})
	p.signal(syscall.SIGTERM)
	p.wait(15 * time.Second)

	before := connectionsOf(t, env["DATABASE_PATH"])
	rotated := make([]byte, 32)
	rand.Read(rotated)
	newKey := base64.StdEncoding.EncodeToString(rotated)
	env["TOKEN_ENCRYPTION_KEY"] = newKey + "," + old
	var report struct {
		Paused []struct {
			Account       string   `json:"account"`
			Subscriptions []string `json:"subscriptions"`
		} `json:"paused"`
	}
	auditReport(t, w.dir, env, &report)
	if len(report.Paused) != 1 || report.Paused[0].Account != lisa || len(report.Paused[0].Subscriptions) != 1 {
		t.Errorf("bot audit paused = %+v, want Lisa's one subscription", report.Paused)
	}
	for account, c := range connectionsOf(t, env["DATABASE_PATH"]) {
		b := before[account]
		if c.State != b.State || !bytes.Equal(c.Token, b.Token) || !c.UpdatedAt.Equal(b.UpdatedAt) {
			t.Errorf("%s's connection after bot audit: %s, token changed %v; want it untouched (%s)", account, c.State, !bytes.Equal(c.Token, b.Token), b.State)
		}
	}

	env["TOKEN_ENCRYPTION_KEY"] = newKey // the old key dropped
	p = start(t, w.dir, env)
	p.ready()
	if !strings.Contains(p.out.String(), "TOKEN_ENCRYPTION_KEY cannot decrypt 2 of the 2 stored connections") {
		t.Errorf("the start-up log does not say how many connections the key cannot decrypt:\n%s", p.out.String())
	}
	unreadable := func() []slacktest.Message {
		var out []slacktest.Message
		for _, m := range w.inChannel(bobDM) {
			if strings.Contains(m.Text, "Your reminders from bob@example.com stopped: I can no longer read the access you gave") {
				out = append(out, m)
			}
		}
		return out
	}
	eventually(t, 20*time.Second, "the DM asking Bob to reconnect", func() bool { return len(unreadable()) == 1 })
	if b := string(unreadable()[0].Blocks); !strings.Contains(b, "reconnect_google") {
		t.Errorf("the DM has no Reconnect button: %s", b)
	}
	time.Sleep(5 * time.Second) // past 3 ticks
	if n := len(unreadable()); n != 1 {
		t.Errorf("DMs asking Bob to reconnect = %d, want 1", n)
	}
	if status, body := httpGet("http://" + addr + "/healthz"); status != http.StatusOK {
		t.Errorf("GET /healthz with Bob's token unreadable = %d %q, want 200", status, body)
	}
}
