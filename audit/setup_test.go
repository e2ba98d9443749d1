package audit_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	gcal "google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/audit"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/internal/retry"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// calendarFake is a Google Calendar emulator and the real Calendar client
// reading it.
type calendarFake struct {
	t   *testing.T
	srv *calendartest.Server
	src *calendar.Source
}

func newCalendar(t *testing.T) *calendarFake {
	t.Helper()
	srv := calendartest.NewServer()
	t.Cleanup(srv.Close)
	key := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(key, srv.ServiceAccountJSON(), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := calendar.New(context.Background(), calendar.Config{
		CredentialsFile: key, Endpoint: srv.Endpoint(), HTTPClient: srv.Client(),
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
	})
	if err != nil {
		t.Fatal(err)
	}
	return &calendarFake{t: t, srv: srv, src: src}
}

// put stores ev, or moves the event with its ID.
func (c *calendarFake) put(calendarID string, ev *gcal.Event) {
	c.t.Helper()
	if err := c.srv.Put(calendarID, ev); err != nil {
		c.t.Fatal(err)
	}
}

// cancel cancels an event, as deleting it in Google Calendar does.
func (c *calendarFake) cancel(calendarID, id string) {
	c.t.Helper()
	if err := c.srv.Delete(calendarID, id); err != nil {
		c.t.Fatal(err)
	}
}

// env is a seeded ledger (a real SQLite file), a Slack emulator with the
// real notify client pointed at it, and a calendar.
type env struct {
	t     *testing.T
	clock *clock.Fake
	store *sqlite.Store
	srv   *slacktest.Server
	slack *notify.Slack
	cal   *calendarFake
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "reminders.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	srv := slacktest.NewServer()
	t.Cleanup(srv.Close)
	srv.AddUser(slacktest.User{ID: "U0ALICE001", Name: "alice", Email: "alice@example.com"})
	srv.AddChannel(slacktest.Channel{ID: "C0STANDUP1", Name: "standup", Member: true})
	c := clock.NewFake(day)
	srv.SetClock(c.Now)
	slack := notify.New(notify.Config{
		Token: slacktest.Token, APIURL: srv.URL(), Now: c.Now, Sleep: c.Sleep,
		Interval: -1, Retry: retry.Policy{MaxAttempts: 1}, CallTimeout: 5 * time.Second,
	})
	return &env{t: t, clock: c, store: store, srv: srv, slack: slack, cal: newCalendar(t)}
}

// day is the audited day of most tests.
var day = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

func at(hh, mm, ss int) time.Time {
	return day.Add(time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute + time.Duration(ss)*time.Second)
}

var team = meetingbot.Subscription{
	ID: "team", CalendarID: "alice@example.com", Destination: "#standup",
	Offsets: []time.Duration{10 * time.Minute},
}

func meeting(id, title string, start time.Time) meetingbot.Meeting {
	return meetingbot.Meeting{ID: id, Title: title, Start: start, End: start.Add(30 * time.Minute)}
}

func reminder(sub meetingbot.Subscription, m meetingbot.Meeting, offset time.Duration) meetingbot.Reminder {
	return meetingbot.Reminder{
		Key: meetingbot.Key(m.ID, offset, m.Start), Subscription: sub, Meeting: m,
		Offset: offset, TriggerAt: m.Start.Add(-offset),
	}
}

// post sends r through the real notifier at instant when.
func (e *env) post(r meetingbot.Reminder, when time.Time) meetingbot.Receipt {
	e.t.Helper()
	e.clock.Set(when)
	rc, err := e.slack.Notify(context.Background(), r)
	if err != nil {
		e.t.Fatalf("Notify(%s) = %v", r.Key, err)
	}
	return rc
}

// claim takes r's key in the ledger at instant when, as a sweep does.
func (e *env) claim(r meetingbot.Reminder, when time.Time) meetingbot.Entry {
	e.t.Helper()
	en := meetingbot.Entry{
		Subscription: r.Subscription.ID, Key: r.Key, EventID: r.Meeting.ID, Offset: r.Offset,
		Start: r.Meeting.Start.UTC(), TriggerAt: r.TriggerAt.UTC(), Late: when.Sub(r.TriggerAt) > 35*time.Second,
	}
	st, _, err := e.store.Claim(context.Background(), en, when, when.Add(2*time.Minute))
	if err != nil || (st != meetingbot.Claimed && st != meetingbot.Orphaned) {
		e.t.Fatalf("Claim(%s) = %v, %v, want claimed", r.Key, st, err)
	}
	return en
}

// settle records the outcome of a claim at instant when.
func (e *env) record(en meetingbot.Entry, outcome meetingbot.Outcome, code meetingbot.ReasonCode, reason string, rc meetingbot.Receipt, when time.Time) {
	e.t.Helper()
	en.Outcome, en.Code, en.Reason, en.Channel, en.MessageTS = outcome, code, reason, rc.Channel, rc.TS
	if err := e.store.Record(context.Background(), en, when); err != nil {
		e.t.Fatalf("Record(%s) = %v", en.Key, err)
	}
}

// deliver does what a sweep does for a reminder sent at instant when:
// claim, post, record.
func (e *env) deliver(r meetingbot.Reminder, when time.Time) meetingbot.Receipt {
	e.t.Helper()
	en := e.claim(r, when)
	rc := e.post(r, when)
	e.record(en, meetingbot.Sent, "", "", rc, when)
	return rc
}

// edit does what a sweep does when r's meeting changed after r was sent:
// claim the edit, make it through the real notifier at instant when,
// record it.
func (e *env) edit(r meetingbot.Reminder, rc meetingbot.Receipt, kind meetingbot.EditKind, movedTo, when time.Time) {
	e.t.Helper()
	ctx := context.Background()
	en := meetingbot.Entry{Subscription: r.Subscription.ID, Key: r.Key}
	st, cur, err := e.store.ClaimEdit(ctx, en, when, when.Add(2*time.Minute))
	if err != nil || st != meetingbot.Claimed {
		e.t.Fatalf("ClaimEdit(%s) = %v, %v, want claimed", r.Key, st, err)
	}
	e.clock.Set(when)
	if err := e.slack.Edit(ctx, meetingbot.Follow{Reminder: r, Message: rc, SentAt: r.TriggerAt, Kind: kind, MovedTo: movedTo}); err != nil {
		e.t.Fatalf("Edit(%s) = %v", r.Key, err)
	}
	cur.Edit = meetingbot.Edit{Kind: kind, MovedTo: movedTo, Count: cur.Edit.Count + 1, At: when}
	if err := e.store.RecordEdit(ctx, cur); err != nil {
		e.t.Fatalf("RecordEdit(%s) = %v", r.Key, err)
	}
}

func (e *env) input(from, to, now time.Time) audit.Input {
	return audit.Input{
		Deps: audit.Deps{
			Subscriptions: []meetingbot.Subscription{team}, Source: e.cal.src, Ledger: e.store, Slack: e.slack,
			Interval: 30 * time.Second, Now: func() time.Time { return now },
		},
		From: from, To: to,
	}
}
