package selfservice_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/selfservice"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

const secret = "8f742231b10e8888abcd99yyyzzz85a5"

// People and channels of the test workspace.
const (
	alice  = "U0ALICE001" // a member, Europe/Berlin
	bob    = "U0BOB00001" // a member
	carol  = "U0CAROL001" // a workspace admin
	olga   = "U0OLGA0001" // the workspace owner
	lisa   = "U0LISA0001" // listed in SLACK_ADMINS by ID
	mike   = "U0MIKE0001" // listed in SLACK_ADMINS by email
	nora   = "U0NORA0001" // her email is hidden (no users:read.email)
	eng    = "C0ENG00001"
	ops    = "C0OPS00001"
	aliceD = "D0ALICE001" // Alice's DM with the bot

	serviceAccount = "meetingbot@project.iam.gserviceaccount.com"
	team           = "team@group.calendar.google.com"
)

var t0 = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

// noAccess is a calendar error that needs someone to act, as the calendar
// package's are.
type noAccess struct{ msg string }

func (e noAccess) Error() string   { return e.msg }
func (e noAccess) Permanent() bool { return true }

// calendars is an in-memory Calendars: meetings and errors per calendar,
// and a gate that holds reads back.
type calendars struct {
	mu       sync.Mutex
	meetings map[string][]selfservice.Meeting
	errs     map[string]error
	gate     chan struct{} // reads wait for it to close, when set
	reads    []string
}

func (c *calendars) Upcoming(ctx context.Context, calendarID, _ string, from, to time.Time, limit int) ([]selfservice.Meeting, error) {
	c.mu.Lock()
	gate := c.gate
	c.reads = append(c.reads, calendarID)
	c.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.errs[calendarID]; err != nil {
		return nil, err
	}
	var out []selfservice.Meeting
	for _, m := range c.meetings[calendarID] {
		if !m.Start.Before(from) && m.Start.Before(to) && len(out) < limit {
			out = append(out, m)
		}
	}
	return out, nil
}

func (c *calendars) set(calendarID string, err error, meetings ...selfservice.Meeting) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs[calendarID] = err
	c.meetings[calendarID] = meetings
}

func (c *calendars) hold() (release func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	gate := make(chan struct{})
	c.gate = gate
	return func() { close(gate) }
}

func (c *calendars) readCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.reads)
}

// env is one bot's self-service against a local Slack and a real SQLite
// file.
type env struct {
	t      *testing.T
	clock  *clock.Fake
	slack  *slacktest.Server
	store  *sqlite.Store
	cals   *calendars
	app    *selfservice.App
	server *httptest.Server
	cfg    selfservice.Config
}

var (
	weekly  = selfservice.Meeting{Title: "Weekly sync", Start: t0.Add(time.Hour), Series: "weekly"}
	oneOff  = selfservice.Meeting{Title: "Budget <review> & co", Start: t0.Add(3 * time.Hour)}
	teamMtg = selfservice.Meeting{Title: "Team standup", Start: t0.Add(30 * time.Minute), Series: "standup"}
)

func newEnv(t *testing.T, configure ...func(*selfservice.Config)) *env {
	t.Helper()
	e := &env{t: t, clock: clock.NewFake(t0)}
	e.slack = slacktest.NewServer()
	t.Cleanup(e.slack.Close)
	e.slack.SetClock(e.clock.Now)
	for _, u := range []struct {
		id, name, email string
		p               slacktest.Profile
	}{
		{alice, "alice", "alice@example.com", slacktest.Profile{TZ: "Europe/Berlin"}},
		{bob, "bob", "bob@example.com", slacktest.Profile{TZ: "America/New_York"}},
		{carol, "carol", "carol@example.com", slacktest.Profile{Admin: true}},
		{olga, "olga", "olga@example.com", slacktest.Profile{Owner: true, PrimaryOwner: true}},
		{lisa, "lisa", "lisa@example.com", slacktest.Profile{}},
		{mike, "mike", "Mike@Example.com", slacktest.Profile{}},
		{nora, "nora", "nora@example.com", slacktest.Profile{HideEmail: true}},
	} {
		e.slack.AddUser(slacktest.User{ID: u.id, Name: u.name, Email: u.email})
		e.slack.SetProfile(u.id, u.p)
	}
	e.slack.AddChannel(slacktest.Channel{ID: eng, Name: "eng", Member: true})
	e.slack.AddChannel(slacktest.Channel{ID: ops, Name: "ops", Member: true})

	var err error
	e.store, err = sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "bot.db"))
	require.NoError(t, err)
	t.Cleanup(func() { e.store.Close() })

	e.cals = &calendars{meetings: map[string][]selfservice.Meeting{}, errs: map[string]error{}}
	e.cals.set("alice@example.com", nil, weekly, oneOff)
	e.cals.set(team, nil, teamMtg)

	e.cfg = selfservice.Config{
		Store:          e.store,
		Calendars:      e.cals,
		Slack:          slack.New(slacktest.Token, slack.OptionAPIURL(e.slack.URL())),
		DefaultOffsets: []time.Duration{10 * time.Minute, time.Minute},
		Limits:         selfservice.Limits{Tick: 30 * time.Second, StartGrace: time.Minute},
		Admins:         []string{lisa, "mike@example.com"},
		Access:         selfservice.Access{ServiceAccount: serviceAccount},
		BotUserID:      slacktest.BotUserID,
		Now:            e.clock.Now,
		AfterFunc:      e.clock.AfterFunc,
		Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if testing.Verbose() {
		e.cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	for _, f := range configure {
		f(&e.cfg)
	}
	e.app, err = selfservice.New(e.cfg)
	require.NoError(t, err)
	h, err := e.app.Handler(secret)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/slack/", h)
	e.server = httptest.NewServer(mux)
	t.Cleanup(e.server.Close)
	t.Cleanup(e.app.Close) // runs first: the work in flight ends before the servers
	return e
}

// fixture reads one of Slack's documented shapes.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "slack", name))
	require.NoError(t, err)
	return b
}

// signed is a request as Slack sends it: body, content type, and the
// headers signed at a given instant.
type signed struct {
	path, contentType string
	body              []byte
	header            http.Header
}

func (e *env) signed(path, contentType string, body []byte) signed {
	req, _ := http.NewRequest(http.MethodPost, "/", nil)
	slacktest.Sign(req.Header, body, secret, e.clock.Now())
	return signed{path: path, contentType: contentType, body: body, header: req.Header}
}

// send posts s to the handler and returns the status and body.
func (e *env) send(s signed) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.server.URL+s.path, bytes.NewReader(s.body))
	require.NoError(e.t, err)
	for k, v := range s.header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", s.contentType)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// commandForm is the slash command Slack sends when user types
// "/meetingbot text" in channel, from Slack's documented example.
func (e *env) commandForm(user, channel, text string) []byte {
	form, err := url.ParseQuery(string(fixture(e.t, "slash_command.form")))
	require.NoError(e.t, err)
	name := map[string]string{eng: "eng", ops: "ops"}[channel]
	if name == "" {
		name = "directmessage"
	}
	form.Set("team_id", slacktest.TeamID)
	form.Set("api_app_id", slacktest.AppID)
	form.Set("user_id", user)
	form.Set("channel_id", channel)
	form.Set("channel_name", name)
	form.Set("command", "/meetingbot")
	form.Set("text", text)
	form.Set("response_url", e.slack.ResponseURL())
	return []byte(form.Encode())
}

// command runs "/meetingbot text" as user in channel and returns the
// ephemeral reply of the HTTP answer.
func (e *env) command(user, channel, text string) string {
	e.t.Helper()
	status, body := e.send(e.signed(selfservice.PathCommands, "application/x-www-form-urlencoded", e.commandForm(user, channel, text)))
	require.Equal(e.t, http.StatusOK, status, "/meetingbot %s: %s", text, body)
	var reply struct {
		ResponseType string `json:"response_type"`
		Text         string `json:"text"`
	}
	require.NoError(e.t, json.Unmarshal([]byte(body), &reply), body)
	require.Equal(e.t, "ephemeral", reply.ResponseType, "replies are ephemeral")
	return reply.Text
}

// interact sends a block_actions payload for user with one action, built
// on Slack's documented example (Home tab container unless fromMessage).
func (e *env) interact(user string, fromMessage bool, action map[string]any) (int, string) {
	e.t.Helper()
	name := "block_actions.home.json"
	if fromMessage {
		name = "block_actions.message.json"
	}
	var payload map[string]any
	require.NoError(e.t, json.Unmarshal(fixture(e.t, name), &payload))
	payload["user"].(map[string]any)["id"] = user
	fromOurWorkspace(payload)
	act := payload["actions"].([]any)[0].(map[string]any)
	for k, v := range action {
		act[k] = v
	}
	if fromMessage {
		payload["response_url"] = e.slack.ResponseURL()
	}
	b, _ := json.Marshal(payload)
	body := []byte(url.Values{"payload": {string(b)}}.Encode())
	return e.send(e.signed(selfservice.PathInteractivity, "application/x-www-form-urlencoded", body))
}

// openHome sends the app_home_opened event of Slack's example for user.
func (e *env) openHome(user string) (int, string) {
	e.t.Helper()
	var ev map[string]any
	require.NoError(e.t, json.Unmarshal(fixture(e.t, "app_home_opened.json"), &ev))
	ev["event"].(map[string]any)["user"] = user
	ev["event_id"] = nextEventID() // each event Slack sends has its own
	fromOurWorkspace(ev)
	b, _ := json.Marshal(ev)
	return e.send(e.signed(selfservice.PathEvents, "application/json", b))
}

// fromOurWorkspace makes one of Slack's documented payloads (an event, an
// interaction) come from the test workspace and app, which auth.test and
// bots.info name, as every payload Slack sends the bot does.
func fromOurWorkspace(payload map[string]any) {
	payload["api_app_id"] = slacktest.AppID
	if team, ok := payload["team"].(map[string]any); ok {
		team["id"] = slacktest.TeamID
	} else {
		payload["team_id"] = slacktest.TeamID
	}
}

// subs returns the subscriptions the scheduler would sweep.
func (e *env) subs() []meetingbot.SlackSubscription {
	e.t.Helper()
	subs, err := e.store.SlackSubscriptions(context.Background())
	require.NoError(e.t, err)
	return subs
}

func (e *env) settings(user string) meetingbot.SlackSettings {
	e.t.Helper()
	set, _, err := e.store.SlackSettingsOf(context.Background(), user)
	require.NoError(e.t, err)
	return set
}

// home waits for the n-th publish of user's Home tab and returns its
// blocks as text.
func (e *env) home(user string, n int) string {
	e.t.Helper()
	var got string
	require.Eventually(e.t, func() bool {
		count := 0
		for _, v := range e.slack.HomeViews() {
			if v.User == user {
				count++
				got = texts(v.Blocks)
			}
		}
		return count >= n
	}, 5*time.Second, 5*time.Millisecond, "Home tab of %s published %d times", user, n)
	return got
}

// dateOf is the <!date^…> token's Unix seconds for t.
func dateOf(t time.Time) string { return "<!date^" + strconv.FormatInt(t.Unix(), 10) + "^" }

// texts returns every string in a JSON document (texts, action IDs,
// values), one a line: what a reader of the view can see and click.
func texts(doc []byte) string {
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return string(doc)
	}
	var b bytes.Buffer
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x + "\n")
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k])
			}
		}
	}
	walk(v)
	return b.String()
}
