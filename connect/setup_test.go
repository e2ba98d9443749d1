package connect_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/connect"
	"github.com/meetingbot/meetingbot/internal/keyring"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// emails are the Slack profile emails of the test's people; Slack does
// not answer for UNREACHABLE's.
var emails = map[string]string{"U1": "Alice@Example.com", "U2": "bob@example.com", "U3": "mallory@example.com"}

// rig is one bot's accounts over a real SQLite file, behind an https
// front, with Google's OAuth server emulated.
type rig struct {
	t         *testing.T
	google    *calendartest.Server
	slack     *slacktest.Server
	path      string
	key       string
	front     *httptest.Server
	fakeClock *fakeClock
	replica   []*connect.Accounts
	stores    []*sqlite.Store
	// turn picks the replica the front sends the next request to.
	turn      atomic.Int64
	mu        sync.Mutex
	served    []served
	connected chan meetingbot.Connection
	broken    chan meetingbot.Connection
	stopped   chan meetingbot.Connection
}

// served is one request the front sent to a replica.
type served struct {
	replica int
	path    string
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newKey() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// newRig starts Google and n replicas sharing one database, behind one
// front that sends each request to the next replica in turn.
func newRig(t *testing.T, n int) *rig {
	t.Helper()
	r := &rig{t: t, google: calendartest.NewServer(), path: filepath.Join(t.TempDir(), "bot.db"), key: newKey(),
		fakeClock: &fakeClock{now: time.Now()}, connected: make(chan meetingbot.Connection, 10), broken: make(chan meetingbot.Connection, 10), stopped: make(chan meetingbot.Connection, 10)}
	t.Cleanup(r.google.Close)
	r.slack = slacktest.NewServer()
	t.Cleanup(r.slack.Close)
	r.front = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		i := int(r.turn.Add(1)-1) % len(r.replica)
		r.mu.Lock()
		r.served = append(r.served, served{i, req.URL.Path})
		r.mu.Unlock()
		r.replica[i].Handler().ServeHTTP(w, req)
	}))
	r.front.StartTLS()
	t.Cleanup(r.front.Close)
	r.slack.RegisterRedirect(connect.RedirectURI(r.front.URL, meetingbot.ProviderSlack))
	for range n {
		r.addReplica(r.key)
	}
	return r
}

// addReplica opens one more process on the database, with keys.
func (r *rig) addReplica(keys string) *connect.Accounts {
	t := r.t
	st, err := sqlite.Open(t.Context(), r.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a := r.accounts(st, keys)
	r.stores = append(r.stores, st)
	r.replica = append(r.replica, a)
	return a
}

func (r *rig) accounts(st *sqlite.Store, keys string, options ...func(*connect.Config)) *connect.Accounts {
	t := r.t
	ring, err := keyring.Parse(keys)
	if err != nil {
		t.Fatal(err)
	}
	client := r.google.OAuthClientJSON(connect.RedirectURI(r.front.URL, meetingbot.ProviderGoogle))
	g, err := connect.NewGoogle(connect.GoogleConfig{
		Client:      googleClient(t, client),
		RedirectURI: connect.RedirectURI(r.front.URL, meetingbot.ProviderGoogle),
		Email: func(ctx context.Context, userID string) (string, error) {
			if userID == "UNREACHABLE" {
				return "", errors.New("users.info UNREACHABLE: 503 Service Unavailable")
			}
			return emails[userID], nil
		},
		Now: r.fakeClock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	sl, err := connect.NewSlack(connect.SlackConfig{
		ClientID: slacktest.ClientID, ClientSecret: slacktest.ClientSecret, APIURL: r.slack.URL(),
		RedirectURI: connect.RedirectURI(r.front.URL, meetingbot.ProviderSlack), TeamID: slacktest.TeamID, Now: r.fakeClock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := connect.Config{
		Store: st, Keyring: ring, PublicURL: r.front.URL, Providers: []connect.Provider{g, sl},
		HTTPClient: r.google.Client(),
		Now:        r.fakeClock.Now,
	}
	for _, o := range options {
		o(&cfg)
	}
	a, err := connect.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a.Hook(connect.Hooks{
		Connected:     func(_ context.Context, c meetingbot.Connection) { r.connected <- c },
		Broken:        func(_ context.Context, c meetingbot.Connection) { r.broken <- c },
		Disconnecting: func(_ context.Context, c meetingbot.Connection) { r.stopped <- c },
	})
	return a
}

// browser is a person's browser: its own cookies, trusting the front.
func (r *rig) browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Transport: r.front.Client().Transport, Timeout: 10 * time.Second}
}

// visit opens url and returns the final page's status and text.
func visit(t *testing.T, b *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := b.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, html.UnescapeString(string(body))
}

// link asks replica 0 for user's link.
func (r *rig) link(user string) string {
	r.t.Helper()
	l, err := r.replica[0].Link(r.t.Context(), meetingbot.ProviderGoogle, user)
	if err != nil {
		r.t.Fatal(err)
	}
	return l
}

// noSecrets fails if page shows a token, a code or the state.
func noSecrets(t *testing.T, page string, secrets ...string) {
	t.Helper()
	for _, s := range append(secrets, "ya29.", "1//0g", "4/0A", "state=", "code=") {
		if s != "" && strings.Contains(page, s) {
			t.Errorf("the page shows %q:\n%s", s, page)
		}
	}
}
