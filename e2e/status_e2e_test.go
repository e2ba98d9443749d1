package e2e

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
)

// statusEnv is w's self-service environment with people's Slack status
// on, its PUBLIC_URL the https front of the bot at addr, and Bob about to
// allow it.
func (w *world) statusEnv(t *testing.T, addr string, overrides ...string) (map[string]string, *httptest.Server) {
	t.Helper()
	front := httpsFront(t, addr)
	key := make([]byte, 32)
	rand.Read(key)
	w.slack.RegisterRedirect(front.URL + "/slack/oauth/callback")
	w.slack.SignIn(bobID)
	env := w.selfServiceEnv(append([]string{"HTTP_ADDR=" + addr, "PUBLIC_URL=" + front.URL, "TOKEN_ENCRYPTION_KEY=" + base64.StdEncoding.EncodeToString(key),
		"SLACK_CLIENT_ID=" + slacktest.ClientID, "SLACK_CLIENT_SECRET=" + slacktest.ClientSecret, "CALENDAR_RESYNC_INTERVAL=1s"}, overrides...)...)
	w.cal.SetNotifyClient(front.Client())
	return env, front
}

// bobsSets returns the users.profile.set calls that set Bob's status.
func (w *world) bobsSets() []slacktest.StatusSet {
	var out []slacktest.StatusSet
	for _, s := range w.slack.StatusSets() {
		if s.User == bobID {
			out = append(out, s)
		}
	}
	return out
}

// waitStatusCall waits for the users.profile.set call after the n first.
func (w *world) waitStatusCall(t *testing.T, n int, within time.Duration) {
	t.Helper()
	eventually(t, within, "a users.profile.set call", func() bool { return len(w.slack.CallsTo("users.profile.set")) > n })
}

// Bob's status at his meeting's start, with the bot killed (SIGKILL)
// while Slack holds the users.profile.set and started again: his status
// is set once, at most a minute late, the ledger saying it was resent
// after an interrupted send; the restart sets nothing more.
func TestStatusOnceThroughSIGKILL(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	addr := freeAddr(t)
	env, front := w.statusEnv(t, addr)
	p := start(t, w.dir, env)
	p.ready()
	if status, page := browse(t, front, w.slash(t, addr, bobID, bobDM, "status on")); status != http.StatusOK {
		t.Fatalf("the Slack flow ended with %d:\n%s", status, page)
	}

	begins := at(6 * time.Second)
	if err := w.cal.Put(bob, calendartest.NewEvent("review", "Review", begins, begins.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	w.slack.SetLatency(2 * time.Second)
	w.waitStatusCall(t, 0, 30*time.Second)
	p.signal(syscall.SIGKILL)
	p.wait(10 * time.Second)
	if n := len(w.bobsSets()); n != 0 {
		t.Fatalf("Bob's status set %d times before the kill, want the call cut", n)
	}
	w.slack.SetLatency(0)

	p = start(t, w.dir, env)
	p.ready()
	eventually(t, 30*time.Second, "Bob's status set after the restart", func() bool { return len(w.bobsSets()) > 0 })
	time.Sleep(3 * time.Second) // past 3 ticks: nothing more
	sets := w.bobsSets()
	if len(sets) != 1 || !sets[0].Expiration.Equal(begins.Add(time.Hour)) || sets[0].At.Sub(begins) > meetingbot.StartGrace {
		t.Errorf("Bob's status sets = %+v, want one until %v, at most a minute after %v", sets, begins.Add(time.Hour), begins)
	}
	p.signal(syscall.SIGTERM)
	p.wait(15 * time.Second)
	e := ledger(t, env["DATABASE_PATH"], "status:"+bobID)["review"]
	if e.Outcome != meetingbot.Sent || e.Code != meetingbot.ReasonResent {
		t.Errorf("ledger entry of Bob's status = %s %s (%s), want sent, resent after the interrupted send", e.Outcome, e.Code, e.Reason)
	}
}

// Two replicas on one PostgreSQL share the status subscriptions. The one
// holding Bob's is killed while Slack holds its users.profile.set; the
// other takes the subscription over and sets Bob's status once, within a
// minute of his meeting's start; Lisa's, held by either, is set once too.
func TestStatusOnceWithTwoReplicas(t *testing.T) {
	t.Parallel()
	dbURL := withPassword(t, pgtest.URL(t))
	w := newWorld(t)
	addrs := []string{freeAddr(t), freeAddr(t)}
	env, front := w.statusEnv(t, addrs[0], "TICK_INTERVAL=1s")
	delete(env, "DATABASE_PATH")
	env["DATABASE_URL"] = dbURL
	var bots []*proc
	for _, addr := range addrs {
		e := map[string]string{}
		for k, v := range env {
			e[k] = v
		}
		e["HTTP_ADDR"] = addr
		bots = append(bots, start(t, w.dir, e))
	}
	for _, b := range bots {
		b.ready()
	}
	for _, who := range []struct{ id, dm string }{{bobID, bobDM}, {lisaID, lisaDM}} {
		w.slack.SignIn(who.id)
		if status, page := browse(t, front, w.slash(t, addrs[0], who.id, who.dm, "status on")); status != http.StatusOK {
			t.Fatalf("%s's Slack flow ended with %d:\n%s", who.id, status, page)
		}
	}
	w.cal.AddCalendar(lisa)
	// Lisa's meeting starts later: the first status set at Bob's start
	// is his.
	begins := at(8 * time.Second)
	starts := map[string]time.Time{bobID: begins, lisaID: begins.Add(5 * time.Second)}
	for _, m := range []struct{ cal, id, who string }{{bob, "review", bobID}, {lisa, "planning", lisaID}} {
		if err := w.cal.Put(m.cal, calendartest.NewEvent(m.id, m.id, starts[m.who], starts[m.who].Add(time.Hour))); err != nil {
			t.Fatal(err)
		}
	}
	for _, addr := range addrs {
		waitHealth(t, addr, http.StatusOK, "holds 1 of 2 subscriptions", 30*time.Second)
	}

	sleepUntil(begins.Add(-time.Second))
	killed := holderOf(t, dbURL, bots, "status:"+bobID)
	w.slack.SetLatency(2 * time.Second)
	eventually(t, 20*time.Second, "the set of Bob's status reaching Slack", func() bool {
		for _, c := range w.slack.CallsTo("users.profile.set") {
			if strings.Contains(c.Form.Get("profile"), "In a meeting") {
				return true
			}
		}
		return false
	})
	killed.signal(syscall.SIGKILL)
	killed.wait(10 * time.Second)
	w.slack.SetLatency(0)

	eventually(t, 60*time.Second, "Bob's status set by the other replica", func() bool { return len(w.bobsSets()) > 0 })
	sleepUntil(starts[lisaID].Add(5 * time.Second))
	for _, b := range bots {
		if !b.exited() {
			b.signal(syscall.SIGTERM)
			b.wait(15 * time.Second)
		}
	}
	per := map[string][]slacktest.StatusSet{}
	for _, s := range w.slack.StatusSets() {
		per[s.User] = append(per[s.User], s)
	}
	for _, who := range []string{bobID, lisaID} {
		sets := per[who]
		if len(sets) != 1 || !sets[0].Expiration.Equal(starts[who].Add(time.Hour)) || sets[0].At.Sub(starts[who]) > meetingbot.StartGrace {
			t.Errorf("%s's status sets = %+v, want one until %v, at most a minute after %v", who, sets, starts[who].Add(time.Hour), starts[who])
		}
	}
	for _, e := range ledgerOf(t, dbURL) {
		if e.Subscription == "status:"+bobID {
			t.Logf("ledger: Bob's status %s %s (%s)", e.Outcome, e.Code, e.Reason)
		}
	}
}
