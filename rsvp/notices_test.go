package rsvp_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/rsvp"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

const aliceID = "U0ALICE001"

var t0 = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

// mirror is an in-memory reading of calendars, as the mirror answers.
type fakeMirror struct {
	mu    sync.Mutex
	cals  map[string][]meetingbot.Meeting
	reads int
	// stale, when set, is the calendar's last reading's age: Meetings
	// answers it with a StaleReading, as the mirror does while the
	// calendar cannot answer.
	stale *meetingbot.StaleReading
}

func (m *fakeMirror) Meetings(_ context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	if m.stale != nil {
		return m.cals[sub.CalendarID], m.stale
	}
	var out []meetingbot.Meeting
	for _, mt := range m.cals[sub.CalendarID] {
		if mt.Start.After(from) && !mt.Start.After(to) {
			out = append(out, mt)
		}
	}
	return out, nil
}

func (m *fakeMirror) put(cal string, ms ...meetingbot.Meeting) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cals[cal] = append(m.cals[cal], ms...)
}

// invite is an invitation from Bob to Alice, made at updated.
func invite(id, title string, start, updated time.Time) meetingbot.Meeting {
	return meetingbot.Meeting{ID: id, Title: title, Start: start, End: start.Add(30 * time.Minute), Organizer: "Bob",
		HTMLLink: "https://www.google.com/calendar/event?eid=" + id, Updated: updated, Response: meetingbot.ResponseNeedsAction}
}

// noticeEnv is the notices of one workspace: a Slack emulator, a real
// SQLite file, the mirror's reading, Alice connected.
type noticeEnv struct {
	t            *testing.T
	clock        *clock.Fake
	slack        *slacktest.Server
	path         string
	store        *sqlite.Store
	fakeMirror   *fakeMirror
	fakeAccounts *fakeAccounts
}

func newNoticeEnv(t *testing.T) *noticeEnv {
	t.Helper()
	e := &noticeEnv{t: t, clock: clock.NewFake(t0), slack: slacktest.NewServer(), path: filepath.Join(t.TempDir(), "bot.db"),
		fakeMirror: &fakeMirror{cals: map[string][]meetingbot.Meeting{}}, fakeAccounts: newPeople(nil)}
	t.Cleanup(e.slack.Close)
	e.slack.SetClock(e.clock.Now)
	e.slack.AddUser(slacktest.User{ID: aliceID, Name: "alice", Email: "alice@example.com"})
	e.fakeAccounts.conns[aliceID] = meetingbot.Connection{Provider: meetingbot.ProviderGoogle, UserID: aliceID, Account: "alice@example.com",
		State: meetingbot.ConnectionActive, Scopes: []string{meetingbot.ScopeCalendarEvents}}
	e.store = e.open()
	return e
}

// open opens the store as one more process on the file.
func (e *noticeEnv) open() *sqlite.Store {
	e.t.Helper()
	s, err := sqlite.Open(context.Background(), e.path)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { s.Close() })
	return s
}

// engine returns an engine of a process on st.
func (e *noticeEnv) engine(st *sqlite.Store) *rsvp.Engine {
	e.t.Helper()
	slack := notify.New(notify.Config{Token: slacktest.Token, APIURL: e.slack.URL(), Now: e.clock.Now, Sleep: e.clock.Sleep, CallTimeout: 2 * time.Second})
	eng, err := rsvp.New(st, e.fakeAccounts, e.fakeMirror, slack, st, rsvp.Options{Clock: e.clock, Interval: time.Second})
	if err != nil {
		e.t.Fatal(err)
	}
	return eng
}

// turnOn turns Alice's notices on at since.
func (e *noticeEnv) turnOn(since time.Time) {
	e.t.Helper()
	if err := e.store.PutInviteSettings(context.Background(), meetingbot.InviteSettings{UserID: aliceID, On: true, Since: since, UpdatedAt: since}); err != nil {
		e.t.Fatal(err)
	}
}

// dms returns the messages in Alice's DM whose metadata names a notice.
func (e *noticeEnv) dms() []slacktest.Message {
	var out []slacktest.Message
	for _, m := range e.slack.Messages() {
		if m.Metadata != nil && m.Metadata.EventPayload["subscription"] == meetingbot.InviteSubscription(aliceID) {
			out = append(out, m)
		}
	}
	return out
}

// ledger returns Alice's notices' entries by key.
func (e *noticeEnv) ledger(keys ...string) map[string]meetingbot.Entry {
	e.t.Helper()
	got, err := e.store.Entries(context.Background(), meetingbot.InviteSubscription(aliceID), keys)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

// TestNoticeOfEachNewInvitationOnce: each invitation Alice has not
// answered gets one DM, once whatever the passes; a series is one notice,
// answered for every occurrence; an invitation she answered, a meeting
// she organises, one that has started and one made before she turned
// notices on get none, the last recorded as such.
func TestNoticeOfEachNewInvitationOnce(t *testing.T) {
	e := newNoticeEnv(t)
	e.turnOn(t0.Add(-time.Hour))
	made := t0.Add(-time.Minute)
	answered := invite("accepted1", "Answered", t0.Add(2*time.Hour), made)
	answered.Response = meetingbot.ResponseAccepted
	organised := invite("own1", "Her own", t0.Add(2*time.Hour), made)
	organised.Response = meetingbot.ResponseNone
	weekly1, weekly2 := invite("weekly_20261201T090000Z", "Weekly", t0.Add(25*time.Hour), made), invite("weekly_20261208T090000Z", "Weekly", t0.Add(7*24*time.Hour-time.Hour), made)
	weekly1.RecurringEventID, weekly2.RecurringEventID = "weekly", "weekly"
	e.fakeMirror.put("alice@example.com",
		invite("plan1", "Planning", t0.Add(time.Hour), made),
		answered, organised, weekly2, weekly1,
		invite("old1", "Old", t0.Add(3*time.Hour), t0.Add(-2*time.Hour)),
		invite("now1", "Started", t0.Add(-time.Minute), made),
	)
	eng := e.engine(e.store)
	for range 3 {
		if err := eng.Tick(t.Context()); err != nil {
			t.Fatalf("Tick = %v", err)
		}
		e.clock.Advance(time.Second)
	}
	dms := e.dms()
	var texts []string
	for _, m := range dms {
		texts = append(texts, m.Text)
	}
	slices.Sort(texts)
	nine := t0.Add(time.Hour)
	want := []string{
		fmt.Sprintf("Bob invited you: Planning, <!date^%d^{date_short_pretty} {time}|2026-11-30 09:00 UTC>–<!date^%d^{time}|09:30 UTC>", nine.Unix(), nine.Add(30*time.Minute).Unix()),
		fmt.Sprintf("Bob invited you: Weekly, <!date^%d^{date_short_pretty} {time}|2026-12-01 09:00 UTC>–<!date^%d^{time}|09:30 UTC>", nine.Add(24*time.Hour).Unix(), nine.Add(24*time.Hour+30*time.Minute).Unix()),
	}
	if !slices.Equal(texts, want) {
		t.Fatalf("notices = %q, want %q", texts, want)
	}
	for _, m := range dms {
		if !strings.HasPrefix(m.Channel, "D") {
			t.Errorf("notice in %s, want Alice's DM", m.Channel)
		}
		if strings.Contains(m.Text, "Weekly") && !strings.Contains(string(m.Blocks), "your answer holds for every occurrence") {
			t.Errorf("the series' notice %s does not say the answer holds for every occurrence", m.Blocks)
		}
	}
	got := e.ledger(meetingbot.InviteKey(aliceID, "plan1"), meetingbot.InviteKey(aliceID, "weekly"), meetingbot.InviteKey(aliceID, "old1"),
		meetingbot.InviteKey(aliceID, "accepted1"), meetingbot.InviteKey(aliceID, "now1"))
	for key, want := range map[string]meetingbot.Outcome{"plan1": meetingbot.Sent, "weekly": meetingbot.Sent, "old1": meetingbot.Skipped} {
		if got[meetingbot.InviteKey(aliceID, key)].Outcome != want {
			t.Errorf("ledger %s = %+v, want %s", key, got[meetingbot.InviteKey(aliceID, key)], want)
		}
	}
	if c := got[meetingbot.InviteKey(aliceID, "old1")].Code; c != meetingbot.ReasonInvitedBefore {
		t.Errorf("old1's code = %q, want %q", c, meetingbot.ReasonInvitedBefore)
	}
	if len(got) != 3 {
		t.Errorf("ledger entries %d, want 3: an answered, organised or started invitation has none", len(got))
	}
}

// TestNoticesNeedAConnectionAndNoticesOn: without notices on, or without
// her Google account connected, Alice gets nothing and no pass fails.
func TestNoticesNeedAConnectionAndNoticesOn(t *testing.T) {
	e := newNoticeEnv(t)
	e.fakeMirror.put("alice@example.com", invite("plan1", "Planning", t0.Add(time.Hour), t0))
	eng := e.engine(e.store)
	if err := eng.Tick(t.Context()); err != nil || len(e.dms()) != 0 {
		t.Fatalf("Tick with notices off = %v, %d notices; want none", err, len(e.dms()))
	}
	e.turnOn(t0.Add(-time.Hour))
	e.fakeAccounts.conns[aliceID] = meetingbot.Connection{Provider: meetingbot.ProviderGoogle, UserID: aliceID, Account: "alice@example.com", State: meetingbot.ConnectionBroken}
	if err := eng.Tick(t.Context()); err != nil || len(e.dms()) != 0 {
		t.Fatalf("Tick with her connection stopped = %v, %d notices; want none", err, len(e.dms()))
	}
	if cals, err := eng.Calendars(t.Context()); err != nil || len(cals) != 0 {
		t.Errorf("Calendars = %v, %v; want none while her connection is stopped", cals, err)
	}
	e.fakeAccounts.conns[aliceID] = meetingbot.Connection{Provider: meetingbot.ProviderGoogle, UserID: aliceID, Account: "alice@example.com", State: meetingbot.ConnectionActive}
	if err := eng.Tick(t.Context()); err != nil || len(e.dms()) != 1 {
		t.Fatalf("Tick once connected = %v, %d notices; want 1", err, len(e.dms()))
	}
	if cals, err := eng.Calendars(t.Context()); err != nil || !slices.Equal(cals, []string{meetingbot.ReadAs("alice@example.com", aliceID)}) {
		t.Errorf("Calendars = %v, %v; want Alice's, as she reads it", cals, err)
	}
}

// TestFloodOfInvitationsIsOneDigest: forty invitations of a mailing list
// found together are one message, each recorded as sent in it.
func TestFloodOfInvitationsIsOneDigest(t *testing.T) {
	e := newNoticeEnv(t)
	e.turnOn(t0.Add(-time.Hour))
	var keys []string
	for i := range 40 {
		id := "list" + string(rune('a'+i/26)) + string(rune('a'+i%26))
		m := invite(id, "Lecture "+id, t0.Add(time.Duration(i+1)*3*time.Hour), t0.Add(-time.Minute))
		m.Organizer = "lectures@example.com"
		e.fakeMirror.put("alice@example.com", m)
		keys = append(keys, meetingbot.InviteKey(aliceID, id))
	}
	eng := e.engine(e.store)
	for range 2 {
		if err := eng.Tick(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	dms := e.dms()
	if len(dms) != 1 || !strings.HasPrefix(dms[0].Text, "40 new invitations: Lecture listaa, Lecture listab") {
		t.Fatalf("notices = %d (%v), want one digest of 40", len(dms), dms)
	}
	got := e.ledger(keys...)
	for _, k := range keys {
		if en := got[k]; en.Outcome != meetingbot.Sent || en.Code != meetingbot.ReasonDigest || en.MessageTS != dms[0].TS {
			t.Errorf("ledger %s = %+v, want sent in the digest", k, en)
		}
	}
}

// TestInterruptedNoticeIsLookedUpFirst: a notice a process claimed and
// died with is found in Slack and recorded sent, not sent again; one not
// found is sent once; one whose person turned notices off since is
// skipped as such.
func TestInterruptedNoticeIsLookedUpFirst(t *testing.T) {
	e := newNoticeEnv(t)
	e.turnOn(t0.Add(-time.Hour))
	posted := invite("posted1", "Posted", t0.Add(time.Hour), t0)
	lost := invite("lost1", "Lost", t0.Add(2*time.Hour), t0)
	e.fakeMirror.put("alice@example.com", posted, lost)
	dead := e.open()
	slack := notify.New(notify.Config{Token: slacktest.Token, APIURL: e.slack.URL(), Now: e.clock.Now, Sleep: e.clock.Sleep})
	for _, m := range []meetingbot.Meeting{posted, lost} {
		inv := meetingbot.Invitation{Key: meetingbot.InviteKey(aliceID, m.ID), User: aliceID, Calendar: "alice@example.com", Event: m.ID, Meeting: m, At: t0}
		if _, _, err := dead.Claim(t.Context(), meetingbot.Entry{Subscription: meetingbot.InviteSubscription(aliceID), Kind: meetingbot.KindInvite, Key: inv.Key, EventID: m.ID, Start: m.Start, TriggerAt: t0},
			t0, t0.Add(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if m.ID == "posted1" {
			if _, err := slack.NotifyInvite(t.Context(), inv); err != nil { // Slack took it; the process died before recording
				t.Fatal(err)
			}
		}
	}
	dead.Close()
	e.clock.Advance(time.Minute)
	eng := e.engine(e.store)
	for range 2 {
		if err := eng.Tick(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	counts := map[string]int{}
	for _, m := range e.dms() {
		counts[m.Text[:strings.Index(m.Text, ",")]]++
	}
	if counts["Bob invited you: Posted"] != 1 || counts["Bob invited you: Lost"] != 1 || len(counts) != 2 {
		t.Errorf("notices %v, want one of each", counts)
	}
	got := e.ledger(meetingbot.InviteKey(aliceID, "posted1"), meetingbot.InviteKey(aliceID, "lost1"))
	if en := got[meetingbot.InviteKey(aliceID, "posted1")]; en.Outcome != meetingbot.Sent || en.Code != meetingbot.ReasonInterruptedConfirmed {
		t.Errorf("the notice found in Slack: %+v, want sent, confirmed", en)
	}
	if en := got[meetingbot.InviteKey(aliceID, "lost1")]; en.Outcome != meetingbot.Sent || en.Code != meetingbot.ReasonResent {
		t.Errorf("the notice not found: %+v, want resent", en)
	}

	// A notice interrupted, then notices turned off: skipped, not sent.
	off := invite("off1", "Off", t0.Add(3*time.Hour), t0)
	e.fakeMirror.put("alice@example.com", off)
	dead = e.open()
	if _, _, err := dead.Claim(t.Context(), meetingbot.Entry{Subscription: meetingbot.InviteSubscription(aliceID), Kind: meetingbot.KindInvite, Key: meetingbot.InviteKey(aliceID, "off1"), EventID: "off1",
		Start: off.Start, TriggerAt: e.clock.Now()}, e.clock.Now(), e.clock.Now().Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	dead.Close()
	if err := e.store.PutInviteSettings(t.Context(), meetingbot.InviteSettings{UserID: aliceID, On: false, Since: t0.Add(-time.Hour), UpdatedAt: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := eng.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	if en := e.ledger(meetingbot.InviteKey(aliceID, "off1"))[meetingbot.InviteKey(aliceID, "off1")]; en.Outcome != meetingbot.Skipped || en.Code != meetingbot.ReasonInvitesOff {
		t.Errorf("the notice interrupted before notices went off: %+v, want skipped, invites_off", en)
	}
	if n := len(e.dms()); n != 2 {
		t.Errorf("notices = %d, want still 2", n)
	}
}

// TestTwoProcessesNoticeOnce: two processes on one database, passing at
// the same instants, send each notice once, the flood as digests.
func TestTwoProcessesNoticeOnce(t *testing.T) {
	e := newNoticeEnv(t)
	e.turnOn(t0.Add(-time.Hour))
	for i := range 8 {
		id := "many" + string(rune('a'+i))
		e.fakeMirror.put("alice@example.com", invite(id, "Many "+id, t0.Add(time.Duration(i+1)*time.Hour), t0))
	}
	a, b := e.engine(e.store), e.engine(e.open())
	var wg sync.WaitGroup
	for _, eng := range []*rsvp.Engine{a, b} {
		wg.Go(func() {
			if err := eng.Tick(t.Context()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	seen := map[string]int{}
	for _, m := range e.dms() {
		if !strings.Contains(m.Text, "new invitations") && !strings.HasPrefix(m.Text, "Bob invited you") {
			t.Errorf("notice %q", m.Text)
		}
		list, digest := m.Metadata.EventPayload["reminders"].([]any)
		for _, item := range list {
			seen[item.(map[string]any)["key"].(string)]++
		}
		if !digest {
			seen[m.Metadata.EventPayload["key"].(string)]++
		}
	}
	for i := range 8 {
		key := meetingbot.InviteKey(aliceID, "many"+string(rune('a'+i)))
		if seen[key] != 1 {
			t.Errorf("notices of %s = %d, want 1", key, seen[key])
		}
	}
}

// TestNoticesWaitForAFreshReading: while the calendar cannot answer (the
// mirror answers from an old reading) no notice goes out and the pass
// does not fail; once it answers, the notice goes out.
func TestNoticesWaitForAFreshReading(t *testing.T) {
	e := newNoticeEnv(t)
	e.turnOn(t0.Add(-time.Hour))
	e.fakeMirror.put("alice@example.com", invite("plan1", "Planning", t0.Add(time.Hour), t0))
	e.fakeMirror.stale = &meetingbot.StaleReading{CalendarID: "alice@example.com", ReadAt: t0.Add(-time.Hour), Why: meetingbot.StaleUnavailable, Err: errors.New("503")}
	eng := e.engine(e.store)
	if err := eng.Tick(t.Context()); err != nil || len(e.dms()) != 0 {
		t.Fatalf("Tick on an old reading = %v, %d notices; want nil and none", err, len(e.dms()))
	}
	e.fakeMirror.mu.Lock()
	e.fakeMirror.stale = nil
	e.fakeMirror.mu.Unlock()
	if err := eng.Tick(t.Context()); err != nil || len(e.dms()) != 1 {
		t.Fatalf("Tick once the calendar answers = %v, %d notices; want 1", err, len(e.dms()))
	}
}
