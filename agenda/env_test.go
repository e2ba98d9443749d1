package agenda_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/agenda"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/storage/postgres"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

const (
	alice      = "U0ALICE001" // New York
	aliceEmail = "alice@example.com"
	bob        = "U0BOB00001" // Seoul
	bobEmail   = "bob@example.com"
	interval   = 30 * time.Second
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

// profiles reads Slack profiles through the notifier, uncached, so that a
// zone changed in Slack shows at the next pass.
type slackPeople struct{ slack *notify.Slack }

func (p slackPeople) Person(ctx context.Context, user string) (agenda.Person, error) {
	email, tz, err := p.slack.Profile(ctx, user)
	return agenda.Person{Email: email, TZ: tz}, err
}

// observed counts the outcomes recorded.
type observed struct {
	mu      sync.Mutex
	entries []meetingbot.Entry
}

func (o *observed) RecordedAgenda(e meetingbot.Entry) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.entries = append(o.entries, e)
}

// env is one bot's agenda engine on a fake clock, over a real SQLite
// ledger, the real Calendar and Slack clients and their emulators.
type env struct {
	t      *testing.T
	clock  *clock.Fake
	cal    *calendartest.Server
	slack  *slacktest.Server
	path   string
	pgURL  string // the PostgreSQL store's, "" for SQLite at path
	store  testStore
	engine *agenda.Engine
	obs    *observed
}

// testStore is what the tests read and write of either store.
type testStore interface {
	agenda.Settings
	agenda.Ledger
	PutSlackSettings(ctx context.Context, set meetingbot.SlackSettings) error
	Close() error
}

func newEnv(t *testing.T, start time.Time) *env { return newEnvOn(t, start, "") }

// newEnvOn is newEnv on the PostgreSQL database at pgURL, or on a SQLite
// file when pgURL is "".
func newEnvOn(t *testing.T, start time.Time, pgURL string) *env {
	t.Helper()
	e := &env{t: t, clock: clock.NewFake(start), path: filepath.Join(t.TempDir(), "bot.db"), pgURL: pgURL}
	e.cal = calendartest.NewServer()
	t.Cleanup(e.cal.Close)
	e.cal.AddCalendar(aliceEmail)
	e.cal.AddCalendar(bobEmail)
	e.slack = slacktest.NewServer()
	t.Cleanup(e.slack.Close)
	e.slack.SetClock(e.clock.Now)
	e.slack.AddUser(slacktest.User{ID: alice, Name: "alice", Email: aliceEmail})
	e.slack.AddUser(slacktest.User{ID: bob, Name: "bob", Email: bobEmail})
	e.slack.SetProfile(alice, slacktest.Profile{TZ: "America/New_York"})
	e.slack.SetProfile(bob, slacktest.Profile{TZ: "Asia/Seoul"})
	e.engine, e.store, e.obs = e.open()
	return e
}

// open starts one process: its own store on the shared file and its own
// engine.
func (e *env) open() (*agenda.Engine, testStore, *observed) {
	t := e.t
	t.Helper()
	var store testStore
	var err error
	if e.pgURL != "" {
		store, err = postgres.Open(context.Background(), e.pgURL, postgres.Options{Interval: interval})
	} else {
		store, err = sqlite.Open(context.Background(), e.path)
	}
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	key := filepath.Join(t.TempDir(), "key.json")
	require.NoError(t, os.WriteFile(key, e.cal.ServiceAccountJSON(), 0o600))
	source, err := calendar.New(context.Background(), calendar.Config{
		CredentialsFile: key, Endpoint: e.cal.Endpoint(), HTTPClient: e.cal.Client(), Sleep: e.clock.Sleep,
	})
	require.NoError(t, err)
	slack := notify.New(notify.Config{
		Token: slacktest.Token, APIURL: e.slack.URL(), Now: e.clock.Now, Sleep: e.clock.Sleep, CallTimeout: 2 * time.Second,
	})
	obs := &observed{}
	engine, err := agenda.New(store, slackPeople{slack}, source, slack, store, agenda.Options{
		Interval: interval, Clock: e.clock, Observer: obs,
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	require.NoError(t, err)
	return engine, store, obs
}

// set stores a person's agenda time, as /meetingbot agenda does, at the
// clock's now.
func (e *env) set(user, hhmm, tz string) {
	e.t.Helper()
	require.NoError(e.t, e.store.PutSlackSettings(context.Background(), meetingbot.SlackSettings{
		UserID: user, Agenda: hhmm, TZ: tz, UpdatedAt: e.clock.Now(),
	}))
}

// meeting puts a meeting of calendarID starting at start, for d.
func (e *env) meeting(calendarID, id string, start time.Time, d time.Duration) {
	e.t.Helper()
	require.NoError(e.t, e.cal.Put(calendarID, calendartest.NewEvent(id, "Meeting "+id, start, start.Add(d))))
}

// runUntil runs the engine as Run does, a pass every interval, until the
// clock reads end; the timers fire as the clock passes them.
func (e *env) runUntil(end time.Time, engines ...*agenda.Engine) {
	e.t.Helper()
	if len(engines) == 0 {
		engines = []*agenda.Engine{e.engine}
	}
	for e.clock.Now().Before(end) {
		for _, en := range engines {
			require.NoError(e.t, en.Tick(context.Background()))
		}
		e.clock.Advance(min(interval, end.Sub(e.clock.Now())))
	}
}

// agendas returns the agenda messages posted, oldest first.
func (e *env) agendas() []slacktest.Message {
	var out []slacktest.Message
	for _, m := range e.slack.Messages() {
		if m.Metadata != nil && m.Metadata.EventType == notify.AgendaEventType {
			out = append(out, m)
		}
	}
	return out
}

// entry returns the ledger entry of a key.
func (e *env) entry(user, date string) (meetingbot.Entry, bool) {
	e.t.Helper()
	got, err := e.store.Entries(context.Background(), meetingbot.AgendaSubscription(user), []string{meetingbot.AgendaKey(user, date)})
	require.NoError(e.t, err)
	en, ok := got[meetingbot.AgendaKey(user, date)]
	return en, ok
}

// blocks returns a message's blocks' texts joined.
func blocks(t *testing.T, m slacktest.Message) string {
	t.Helper()
	var bs []struct {
		Text struct {
			Text string `json:"text"`
		} `json:"text"`
	}
	require.NoError(t, json.Unmarshal(m.Blocks, &bs))
	out := ""
	for _, b := range bs {
		out += b.Text.Text + "\n"
	}
	return out
}

// postAs posts alice's agenda of 2026-11-30 as a process that dies before
// recording it would have.
func postAs(t *testing.T, e *env, at time.Time) {
	t.Helper()
	slack := notify.New(notify.Config{Token: slacktest.Token, APIURL: e.slack.URL(), Now: e.clock.Now, Sleep: e.clock.Sleep})
	a := meetingbot.Agenda{User: alice, Calendar: aliceEmail, Date: "2026-11-30", Zone: at.Location(), At: at,
		Meetings: []meetingbot.Meeting{{ID: "standup", Title: "Meeting standup", Start: at.Add(time.Hour), End: at.Add(75 * time.Minute)}}}
	_, err := slack.NotifyAgenda(context.Background(), a)
	require.NoError(t, err)
}
