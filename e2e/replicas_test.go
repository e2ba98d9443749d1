package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/storage/postgres"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
)

// Several replicas of the built bot on one PostgreSQL (a schema of the
// test server each test), against the Calendar and Slack emulators.

// rooms are calendars posted to #eng, one subscription each.
func rooms(w *world, n int) []string {
	var entries []string
	for i := range n {
		cal := fmt.Sprintf("room%d@example.com", i+1)
		w.cal.AddCalendar(cal)
		entries = append(entries, cal+"=#eng")
	}
	return entries
}

// slot is one meeting of the schedule: its calendar, title and start.
type slot struct {
	cal, title string
	start      time.Time
}

// schedule puts a meeting into a room every step from first, cycling
// through the rooms, each with a title of its own.
func schedule(t *testing.T, w *world, entries []string, first time.Time, step time.Duration, n int) []slot {
	t.Helper()
	var out []slot
	for i := range n {
		cal, _, _ := strings.Cut(entries[i%len(entries)], "=")
		s := slot{cal: cal, title: fmt.Sprintf("Slot%02d review", i), start: first.Add(time.Duration(i) * step)}
		w.meetingIn(t, cal, fmt.Sprintf("slot%02d", i), s.title, s.start)
		out = append(out, s)
	}
	return out
}

// checkOnceBeforeStart fails unless each meeting got exactly one reminder,
// posted at or after its trigger and before it started.
func checkOnceBeforeStart(t *testing.T, w *world, slots []slot, offset time.Duration) {
	t.Helper()
	var late time.Duration
	var latest string
	defer func() { t.Logf("latest reminder: %v after its trigger (%s)", late.Round(time.Millisecond), latest) }()
	for _, s := range slots {
		got := w.messages(s.title)
		if len(got) != 1 {
			t.Errorf("reminders of %s (starts %s) = %d, want 1", s.title, s.start.Format("15:04:05"), len(got))
			continue
		}
		trigger := s.start.Add(-offset)
		if d := got[0].Posted.Sub(trigger); d > late {
			late, latest = d, s.title
		}
		if got[0].Posted.Before(trigger) || !got[0].Posted.Before(s.start) {
			t.Errorf("reminder of %s posted at %s, want in [%s, %s)", s.title, got[0].Posted.Format("15:04:05.000"), trigger.Format("15:04:05"), s.start.Format("15:04:05"))
		}
	}
}

// replicaEnv is w's environment with DATABASE_URL instead of DATABASE_PATH.
func replicaEnv(w *world, dbURL string, overrides ...string) map[string]string {
	env := w.env(overrides...)
	delete(env, "DATABASE_PATH")
	env["DATABASE_URL"] = dbURL
	return env
}

// waitHealth waits until addr's /healthz answers status with a body that
// contains want, and returns the body.
func waitHealth(t *testing.T, addr string, status int, want string, within time.Duration) string {
	t.Helper()
	var body string
	eventually(t, within, fmt.Sprintf("GET %s/healthz = %d with %q", addr, status, want), func() bool {
		var got int
		got, body = httpGet("http://" + addr + "/healthz")
		return got == status && strings.Contains(body, want)
	})
	return body
}

// ledgerOf reads the ledger of the replicas' database once they are gone.
func ledgerOf(t *testing.T, dbURL string) []meetingbot.Entry {
	t.Helper()
	s, err := postgres.Open(context.Background(), dbURL, postgres.Options{})
	if err != nil {
		t.Fatalf("postgres.Open = %v", err)
	}
	defer s.Close()
	entries, err := s.Range(context.Background(), "", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatalf("Range = %v", err)
	}
	return entries
}

// holderOf returns the replica among bots that holds the lease of sub: a
// replica's name is host-pid-random.
func holderOf(t *testing.T, dbURL string, bots []*proc, sub string) *proc {
	t.Helper()
	var owner string
	if err := pgtest.Conn(t, dbURL).QueryRow(context.Background(), `SELECT owner FROM subscription_leases WHERE subscription = $1`, sub).Scan(&owner); err != nil {
		t.Fatalf("holder of %s: %v", sub, err)
	}
	parts := strings.Split(owner, "-")
	if len(parts) >= 3 {
		pid := parts[len(parts)-2]
		for _, b := range bots {
			if !b.exited() && fmt.Sprint(b.cmd.Process.Pid) == pid {
				return b
			}
		}
	}
	t.Fatalf("holder of %s is %q, none of the running replicas", sub, owner)
	return nil
}

const replicaPassword = "S3cretReplicaPassw0rd"

// withPassword puts a password into dbURL; the test server trusts local
// connections, so it is never asked for, and must never be printed.
func withPassword(t *testing.T, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), replicaPassword)
	if u.User.Username() == "" {
		u.User = url.UserPassword("postgres", replicaPassword)
	}
	return u.String()
}

// Three replicas share six subscriptions; one is killed with SIGKILL, the
// database ends every connection, another stops with SIGTERM: every
// reminder goes out exactly once and before its meeting starts, and the
// calendars are read once a tick in total, not once per replica.
func TestThreeReplicasOnePostgres(t *testing.T) {
	t.Parallel()
	dbURL := withPassword(t, pgtest.URL(t))
	w := newWorld(t)
	entries := rooms(w, 6)
	const offset = 10 * time.Second
	env := replicaEnv(w, dbURL, "CALENDARS="+strings.Join(entries, ","), "REMINDER_OFFSETS=10s", "TICK_INTERVAL=1s")
	bots := []*proc{start(t, w.dir, env), start(t, w.dir, env), start(t, w.dir, env)}
	addrs := make([]string, len(bots))
	for i, b := range bots {
		addrs[i] = b.ready()
	}
	for _, addr := range addrs {
		waitHealth(t, addr, http.StatusOK, "holds 2 of 6 subscriptions; database reachable", 20*time.Second)
	}

	// Balanced, the three read each calendar once a tick between them.
	lists := w.cal.RequestsTo(calendartest.MethodList)
	time.Sleep(4 * time.Second)
	if got := w.cal.RequestsTo(calendartest.MethodList) - lists; got > 6*4*3/2 || got < 6*3 {
		t.Errorf("events.list calls of 6 subscriptions in 4s at a 1s tick = %d, want about 24 (not 72: one replica per calendar)", got)
	}

	base := at(time.Second)
	slots := schedule(t, w, entries, base.Add(5*time.Second+offset), 2*time.Second, 15) // triggers from +5s to +33s
	// The replica killed holds the room of the next trigger, +13s, and
	// the one stopped the room of the trigger at +25s: their reminders
	// wait for the takeover.
	sleepUntil(base.Add(11500 * time.Millisecond)) // half a second from any trigger
	killed := holderOf(t, dbURL, bots, slots[4].cal+"=#eng")
	killed.signal(syscall.SIGKILL)
	killed.wait(10 * time.Second)
	sleepUntil(base.Add(18500 * time.Millisecond))
	if n := pgtest.Terminate(t, dbURL); n == 0 {
		t.Errorf("connections of the replicas ended by the server = 0, want some")
	}
	sleepUntil(base.Add(24500 * time.Millisecond))
	stopped := holderOf(t, dbURL, bots, slots[10].cal+"=#eng")
	stopped.signal(syscall.SIGTERM)
	if code, took := stopped.wait(15 * time.Second); code != 0 || took > 10*time.Second {
		t.Errorf("replica stopped with SIGTERM: exit %d after %v, want 0 within 10s", code, took)
	}
	var last *proc
	for i, b := range bots {
		if !b.exited() {
			last = b
			waitHealth(t, addrs[i], http.StatusOK, "holds 6 of 6 subscriptions", 10*time.Second)
		}
	}
	sleepUntil(slots[len(slots)-1].start.Add(2 * time.Second))
	last.signal(syscall.SIGTERM)
	last.wait(15 * time.Second)

	checkOnceBeforeStart(t, w, slots, offset)
	sent := 0
	for _, e := range ledgerOf(t, dbURL) {
		if e.Outcome == meetingbot.Sent {
			sent++
		} else {
			t.Errorf("ledger: %s of %s is %s (%s), want sent", e.Key, e.Subscription, e.Outcome, e.Reason)
		}
	}
	if sent != len(slots) {
		t.Errorf("ledger: %d reminders sent, want %d", sent, len(slots))
	}
	for i, b := range bots {
		if out := b.out.String(); strings.Contains(out, replicaPassword) {
			t.Errorf("replica %d printed the database password", i)
		}
	}
	if !strings.Contains(last.out.String(), "db="+config.RedactURL(dbURL)+" ") {
		t.Errorf("the start-up line does not name the database without its credentials")
	}

	// bot audit, on the replicas' database, finds every reminder delivered.
	a := start(t, w.dir, env, "audit", "--since", "1h")
	if code, _ := a.wait(30 * time.Second); code != 0 || !strings.Contains(a.out.String(), "room1@example.com=#eng") {
		t.Errorf("bot audit: exit %d, output %q; want 0 and a row for room1@example.com=#eng", code, a.out.String())
	}
	// and refuses a database the bot never ran on, creating nothing there.
	empty := pgtest.URL(t)
	a = start(t, w.dir, replicaEnv(w, empty, "CALENDARS="+strings.Join(entries, ",")), "audit", "--since", "1h")
	if code, _ := a.wait(30 * time.Second); code == 0 || !strings.Contains(a.out.String(), "no ledger in this database") {
		t.Errorf("bot audit on an empty database: exit %d, output %q; want it refused", code, a.out.String())
	}
}

// A database that cannot be reached for several ticks: nothing is sent
// meanwhile, /healthz answers 503 saying why, and once it is back every
// reminder due during the outage goes out, once, before its meeting.
func TestDatabaseOutageLosesNothing(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.URL(t)
	proxy := newCuttableProxy(t, dbURL)
	w := newWorld(t)
	entries := rooms(w, 4)
	const offset = 15 * time.Second
	env := replicaEnv(w, proxy.url, "CALENDARS="+strings.Join(entries, ","), "REMINDER_OFFSETS=15s", "TICK_INTERVAL=1s")
	bots := []*proc{start(t, w.dir, env), start(t, w.dir, env)}
	var addrs []string
	for _, b := range bots {
		addrs = append(addrs, b.ready())
	}
	for _, addr := range addrs {
		waitHealth(t, addr, http.StatusOK, "holds 2 of 4 subscriptions", 20*time.Second)
	}

	base := at(time.Second)
	slots := schedule(t, w, entries, base.Add(4*time.Second+offset), 2*time.Second, 10) // triggers from +4s to +22s
	cut, back := base.Add(8500*time.Millisecond), base.Add(15500*time.Millisecond)
	sleepUntil(cut)
	proxy.cut()
	for _, addr := range addrs {
		waitHealth(t, addr, http.StatusServiceUnavailable, "database: unreachable since", 6*time.Second)
	}
	sleepUntil(back)
	proxy.restore()
	for _, addr := range addrs {
		waitHealth(t, addr, http.StatusOK, "database reachable", 10*time.Second)
	}
	sleepUntil(slots[len(slots)-1].start.Add(2 * time.Second))
	for _, b := range bots {
		b.signal(syscall.SIGTERM)
		b.wait(15 * time.Second)
	}

	for _, m := range w.slack.Messages() {
		if m.Posted.After(cut.Add(200*time.Millisecond)) && m.Posted.Before(back) {
			t.Errorf("a reminder was posted at %s, while the database could not be reached", m.Posted.Format("15:04:05.000"))
		}
	}
	checkOnceBeforeStart(t, w, slots, offset)
}

// cuttableProxy forwards TCP connections to the test server until cut:
// then it ends every connection and refuses new ones, as a database
// down or out of reach does, until restored.
type cuttableProxy struct {
	url    string
	target string
	ln     net.Listener
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]bool
}

func newCuttableProxy(t *testing.T, dbURL string) *cuttableProxy {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cuttableProxy{target: u.Host, ln: ln, conns: map[net.Conn]bool{}}
	u.Host = ln.Addr().String()
	p.url = u.String()
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.cut() })
	return p
}

func (p *cuttableProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.mu.Unlock()
		go p.forward(c)
	}
}

func (p *cuttableProxy) forward(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		c.Close()
		s.Close()
		return
	}
	p.conns[c], p.conns[s] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { io.Copy(s, c); done <- struct{}{} }()
	go func() { io.Copy(c, s); done <- struct{}{} }()
	<-done
	c.Close()
	s.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, s)
	p.mu.Unlock()
}

// cut ends every connection and refuses new ones until restore.
func (p *cuttableProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
}

func (p *cuttableProxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// DATABASE_URL with DATABASE_PATH is a mistake: the binary exits 2 with
// one line naming both, shows no password and creates nothing.
func TestDatabaseURLAndPathExit2(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.env("DATABASE_URL=postgres://bot:" + replicaPassword + "@127.0.0.1:1/meetingbot")
	p := start(t, w.dir, env)
	code, _ := p.wait(30 * time.Second)
	out := p.out.String()
	if code != 2 || !strings.HasPrefix(out, "DATABASE_URL and DATABASE_PATH: both set") || strings.Count(out, "\n") != 1 {
		t.Errorf("bot with DATABASE_URL and DATABASE_PATH: exit %d, output %q; want 2 and one line naming both", code, out)
	}
	if strings.Contains(out, replicaPassword) {
		t.Errorf("bot with DATABASE_URL and DATABASE_PATH printed the password: %q", out)
	}
	if _, err := os.Stat(env["DATABASE_PATH"]); err == nil {
		t.Errorf("bot with DATABASE_URL and DATABASE_PATH created %s", env["DATABASE_PATH"])
	}
}

// A database that cannot be reached at start-up is waited for: the bot
// says so, naming the database but not its password, and starts when the
// database answers; SIGTERM meanwhile stops it cleanly.
func TestUnreachableDatabaseAtStartUpIsWaitedFor(t *testing.T) {
	t.Parallel()
	proxy := newCuttableProxy(t, withPassword(t, pgtest.URL(t)))
	proxy.cut()
	w := newWorld(t)
	p := start(t, w.dir, replicaEnv(w, proxy.url))
	eventually(t, 20*time.Second, "the bot waiting for its database", func() bool {
		return strings.Contains(p.out.String(), `"msg":"database unreachable at start-up; retrying","db":"postgres://`+strings.TrimPrefix(config.RedactURL(proxy.url), "postgres://")+`"`)
	})
	proxy.restore()
	p.ready()
	p.signal(syscall.SIGTERM)
	if code, _ := p.wait(15 * time.Second); code != 0 {
		t.Errorf("bot stopped with SIGTERM: exit %d, want 0", code)
	}
	if strings.Contains(p.out.String(), replicaPassword) {
		t.Errorf("bot waiting for its database printed the password")
	}

	// SIGTERM while it waits.
	proxy.cut()
	p = start(t, w.dir, replicaEnv(w, proxy.url))
	eventually(t, 20*time.Second, "the bot waiting for its database", func() bool {
		return strings.Contains(p.out.String(), "database unreachable at start-up; retrying")
	})
	p.signal(syscall.SIGTERM)
	if code, _ := p.wait(15 * time.Second); code != 0 {
		t.Errorf("bot stopped with SIGTERM while waiting for its database: exit %d, want 0", code)
	}
}
