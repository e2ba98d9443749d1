package calendar_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	gcal "google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

// mirror is what a caller keeps of a calendar: its meetings by instance
// ID, and the token of the last sync.
type fakeMirror struct {
	t        *testing.T
	src      *calendar.Source
	cal      string
	w        calendar.Window
	token    string
	meetings map[string]meetingbot.Meeting
}

// sync syncs m as the engine will: incrementally with its token, or in
// full when it has none, applying what comes back.
func (m *fakeMirror) sync() calendar.SyncResult {
	m.t.Helper()
	res, err := m.src.Sync(context.Background(), m.cal, m.token, m.w)
	if err != nil {
		m.t.Fatalf("Sync(%s, token %q) error = %v", m.cal, m.token, err)
	}
	m.apply(res)
	return res
}

func (m *fakeMirror) apply(res calendar.SyncResult) {
	if res.Full || m.meetings == nil {
		m.meetings = map[string]meetingbot.Meeting{}
	}
	for _, c := range res.Changes {
		if c.Removed {
			delete(m.meetings, c.ID)
		} else {
			m.meetings[c.ID] = c.Meeting
		}
	}
	m.token = res.Token
}

// show lists the mirror as "KeyID Title HH:MM" lines, by start.
func (m *fakeMirror) show() []string {
	ms := slices.Collect(maps.Values(m.meetings))
	slices.SortFunc(ms, func(a, b meetingbot.Meeting) int { return a.Start.Compare(b.Start) })
	var out []string
	for _, x := range ms {
		out = append(out, x.KeyID()+" "+x.Title+" "+x.Start.UTC().Format("Jan 2 15:04"))
	}
	return out
}

// changes shows a result as sorted "ID title" or "ID removed: why" lines.
func changes(res calendar.SyncResult) []string {
	var out []string
	for _, c := range res.Changes {
		if c.Removed {
			out = append(out, c.ID+" removed: "+c.Why)
		} else {
			out = append(out, c.ID+" "+c.Meeting.Title+" "+c.Meeting.Start.UTC().Format("15:04"))
		}
	}
	slices.Sort(out)
	return out
}

var syncStart = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

func syncWindow(days int) calendar.Window {
	return calendar.Window{From: syncStart, Horizon: syncStart.Add(time.Duration(days) * 24 * time.Hour)}
}

func TestSyncFullThenChanges(t *testing.T) {
	srv := newServer(t)
	at := func(h int) time.Time { return syncStart.Add(time.Duration(h) * time.Hour) }
	put(t, srv, alice, "a", at(1), time.Hour)
	put(t, srv, alice, "b", at(2), time.Hour)
	put(t, srv, alice, "declineme", at(3), time.Hour)
	put(t, srv, alice, "past", at(-1), 30*time.Minute)
	put(t, srv, alice, "far", at(24*9), time.Hour)
	oof := calendartest.NewEvent("oof", "Out of office", at(4), at(5))
	oof.EventType = "outOfOffice"
	allDay := calendartest.NewEvent("holiday", "Holiday", at(0), at(24))
	allDay.Start = &gcal.EventDateTime{Date: "2026-12-01"}
	allDay.End = &gcal.EventDateTime{Date: "2026-12-02"}
	for _, ev := range []*gcal.Event{oof, allDay} {
		if err := srv.Put(alice, ev); err != nil {
			t.Fatal(err)
		}
	}
	src, rec := newSource(t, srv, nil)
	m := &fakeMirror{t: t, src: src, cal: alice, w: syncWindow(8)}

	res := m.sync()
	if got, want := changes(res), []string{"a Meeting a 09:00", "b Meeting b 10:00", "declineme Meeting declineme 11:00", "oof Out of office 12:00"}; !res.Full || !slices.Equal(got, want) || res.Token == "" {
		t.Fatalf("full Sync() = full %v %q token %q, want full %q and a token", res.Full, got, res.Token, want)
	}
	q := srv.LastQuery(alice)
	for k, v := range map[string]string{
		"singleEvents": "true", "showDeleted": "", "maxResults": "2500",
		"timeMin": "2026-11-30T08:00:00Z", "timeMax": "2026-12-08T08:00:01Z", "orderBy": "", "syncToken": "",
	} {
		if got := q.Get(k); got != v {
			t.Errorf("full sync query %s = %q, want %q", k, got, v)
		}
	}
	if f := q.Get("fields"); !strings.Contains(f, "nextSyncToken") || !strings.Contains(f, "status") {
		t.Errorf("full sync fields = %q, want nextSyncToken and status in it", f)
	}

	// Nothing changed: nothing comes back.
	if res := m.sync(); res.Full || len(res.Changes) != 0 {
		t.Errorf("incremental Sync() with no change = full %v %q, want no changes", res.Full, changes(res))
	}

	put(t, srv, alice, "a", at(6), time.Hour) // moved
	if err := srv.Delete(alice, "b"); err != nil {
		t.Fatal(err)
	}
	declined := calendartest.NewEvent("declineme", "Meeting declineme", at(3), at(4))
	declined.Attendees = []*gcal.EventAttendee{{Email: alice, Self: true, ResponseStatus: "declined"}}
	if err := srv.Put(alice, declined); err != nil {
		t.Fatal(err)
	}
	put(t, srv, alice, "c", at(7), time.Hour)
	put(t, srv, alice, "far", at(24*9+1), time.Hour) // changed, still beyond the horizon
	res = m.sync()
	want := []string{
		"a Meeting a 14:00", "b removed: cancelled", "c Meeting c 15:00",
		"declineme removed: declined by the calendar's owner", "far removed: after the horizon",
	}
	if got := changes(res); res.Full || !slices.Equal(got, want) {
		t.Errorf("incremental Sync() = full %v %q, want %q", res.Full, got, want)
	}
	q = srv.LastQuery(alice)
	for _, k := range []string{"timeMin", "timeMax", "orderBy", "updatedMin", "q", "iCalUID"} {
		if q.Has(k) {
			t.Errorf("incremental sync query has %s=%q; Google refuses it with a syncToken", k, q.Get(k))
		}
	}
	// Deleted events come with a syncToken unasked; asking makes Google
	// return every one ever deleted (see sync.go).
	if q.Has("showDeleted") || q.Get("singleEvents") != "true" {
		t.Errorf("incremental sync query showDeleted %q singleEvents %q, want no showDeleted and singleEvents true, as the full sync",
			q.Get("showDeleted"), q.Get("singleEvents"))
	}
	// The out-of-office event is mirrored, for the statuses that ask for
	// it (meetingbot.ForSubscription keeps it from reminders).
	if got, want := m.show(), []string{"oof Out of office Nov 30 12:00", "a Meeting a Nov 30 14:00", "c Meeting c Nov 30 15:00"}; !slices.Equal(got, want) {
		t.Errorf("mirror = %q, want %q", got, want)
	}
	if got := rec.observed(); len(got) != 3 || got[2] != "events.list:ok" {
		t.Errorf("Observe = %q, want three events.list:ok", got)
	}
}

func TestSyncTokenGone(t *testing.T) {
	srv := newServer(t)
	put(t, srv, alice, "a", syncStart.Add(time.Hour), time.Hour)
	src, rec := newSource(t, srv, nil)
	m := &fakeMirror{t: t, src: src, cal: alice, w: syncWindow(8)}
	m.sync()
	srv.ExpireSyncTokens(alice)
	put(t, srv, alice, "b", syncStart.Add(2*time.Hour), time.Hour)

	_, err := src.Sync(context.Background(), alice, m.token, m.w)
	if !errors.Is(err, meetingbot.ErrSyncTokenGone) || meetingbot.IsPermanent(err) {
		t.Fatalf("Sync(expired token) error = %v, want meetingbot.ErrSyncTokenGone, not permanent", err)
	}
	if len(rec.sleeps) != 0 {
		t.Errorf("Sync(expired token) retried, sleeping %v; 410 is an answer", rec.sleeps)
	}
	// The caller clears its mirror and syncs in full.
	m.token = ""
	res := m.sync()
	if got, want := m.show(), []string{"a Meeting a Nov 30 09:00", "b Meeting b Nov 30 10:00"}; !res.Full || !slices.Equal(got, want) {
		t.Errorf("mirror after the full sync = %q, want %q", got, want)
	}
	if res := m.sync(); len(res.Changes) != 0 {
		t.Errorf("incremental Sync() after the full sync = %q, want nothing", changes(res))
	}
}

func TestSyncFollowsEveryPage(t *testing.T) {
	srv := newServer(t)
	for i := range 5 {
		put(t, srv, alice, fmt.Sprintf("ev%d", i), syncStart.Add(time.Duration(i+1)*time.Hour), time.Hour)
	}
	srv.SetPageSize(2)
	srv.QueueEmptyPages(alice, 1)
	src, _ := newSource(t, srv, nil)
	m := &fakeMirror{t: t, src: src, cal: alice, w: syncWindow(8)}
	m.sync()
	if n := srv.Requests(alice); n != 4 || len(m.meetings) != 5 {
		t.Fatalf("full sync: %d requests, %d meetings; want 4 (an empty page, then 3 of at most 2) and 5", n, len(m.meetings))
	}
	for i := range 5 {
		if err := srv.Delete(alice, fmt.Sprintf("ev%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	res := m.sync()
	if n := srv.Requests(alice); len(res.Changes) != 5 || len(m.meetings) != 0 || n != 7 {
		t.Errorf("incremental sync of 5 deletions: %q, mirror %q, %d requests; want 5 removals in 3 more requests, an empty mirror",
			changes(res), m.show(), n)
	}
}

// TestSyncSplitSeries edits "this and following" of a daily standup:
// Google Calendar then has two series, and the incremental sync reports
// the old series' instances from the split on as cancelled and the new
// series' as new. The mirror ends with the same occurrences under the same
// ledger names (KeyID), with the new title from the split on.
func TestSyncSplitSeries(t *testing.T) {
	srv := newServer(t)
	ev := calendartest.NewEvent("standup", "Standup", syncStart.Add(-7*24*time.Hour+time.Hour), syncStart.Add(-7*24*time.Hour+time.Hour+15*time.Minute))
	ev.Recurrence = []string{"RRULE:FREQ=DAILY;COUNT=11"} // the last on Dec 3
	if err := srv.Put(alice, ev); err != nil {
		t.Fatal(err)
	}
	src, _ := newSource(t, srv, nil)
	m := &fakeMirror{t: t, src: src, cal: alice, w: syncWindow(8)}
	m.sync()
	want := []string{
		"standup_20261130T090000Z Standup Nov 30 09:00", "standup_20261201T090000Z Standup Dec 1 09:00",
		"standup_20261202T090000Z Standup Dec 2 09:00", "standup_20261203T090000Z Standup Dec 3 09:00",
	}
	if got := m.show(); !slices.Equal(got, want) {
		t.Fatalf("mirror after the full sync = %q, want %q", got, want)
	}
	if _, err := srv.SplitFollowing(alice, "standup_20261202T090000Z", func(ev *gcal.Event) { ev.Summary = "Standup in room 2" }); err != nil {
		t.Fatal(err)
	}
	res := m.sync()
	wantChanges := []string{
		"standup_20261202T090000Z removed: cancelled", "standup_20261203T090000Z removed: cancelled",
		"standup_R20261202T090000_20261202T090000Z Standup in room 2 09:00",
		"standup_R20261202T090000_20261203T090000Z Standup in room 2 09:00",
	}
	if got := changes(res); !slices.Equal(got, wantChanges) {
		t.Errorf("incremental Sync() after the split = %q, want %q", got, wantChanges)
	}
	want = []string{
		"standup_20261130T090000Z Standup Nov 30 09:00", "standup_20261201T090000Z Standup Dec 1 09:00",
		"standup_20261202T090000Z Standup in room 2 Dec 2 09:00", "standup_20261203T090000Z Standup in room 2 Dec 3 09:00",
	}
	if got := m.show(); !slices.Equal(got, want) {
		t.Errorf("mirror after the split = %q, want %q (same ledger names, new title)", got, want)
	}
	for id, mt := range m.meetings {
		if mt.Series != "standup" {
			t.Errorf("meeting %s Series = %q, want standup", id, mt.Series)
		}
	}
}

// TestSyncHorizon keeps a daily series without an end to the window, and
// shows why the window needs a full sync to move: an incremental sync
// reports changes, and an instance that merely comes within the horizon
// has not changed.
func TestSyncHorizon(t *testing.T) {
	srv := newServer(t)
	ev := calendartest.NewEvent("daily", "Daily", syncStart.Add(time.Hour), syncStart.Add(time.Hour+30*time.Minute))
	ev.Recurrence = []string{"RRULE:FREQ=DAILY"}
	if err := srv.Put(alice, ev); err != nil {
		t.Fatal(err)
	}
	src, _ := newSource(t, srv, nil)
	m := &fakeMirror{t: t, src: src, cal: alice, w: syncWindow(3)}
	m.sync()
	if len(m.meetings) != 3 {
		t.Fatalf("mirror after the full sync = %q, want the 3 instances of the window", m.show())
	}

	// Renaming the series changes every instance, as far as Google
	// expands it: the sync keeps those in the window, drops the rest.
	ev.Summary = "Daily sync"
	if err := srv.Put(alice, ev); err != nil {
		t.Fatal(err)
	}
	res := m.sync()
	removed := 0
	for _, c := range res.Changes {
		if c.Removed && c.Why == "after the horizon" {
			removed++
		}
	}
	if len(m.meetings) != 3 || removed < 300 {
		t.Errorf("incremental sync of a renamed endless series: %d meetings kept, %d dropped after the horizon; want 3 kept and hundreds dropped",
			len(m.meetings), removed)
	}

	// A day later, Dec 3's instance is within the new horizon. Nothing
	// changed, so an incremental sync does not report it; the full sync
	// does.
	m.w = calendar.Window{From: m.w.From.Add(24 * time.Hour), Horizon: m.w.Horizon.Add(24 * time.Hour)}
	if res := m.sync(); len(res.Changes) != 0 {
		t.Fatalf("incremental sync with nothing changed = %q, want nothing", changes(res))
	}
	if _, ok := m.meetings["daily_20261203T090000Z"]; ok {
		t.Fatal("the incremental sync reported an unchanged instance entering the window")
	}
	m.token = ""
	m.sync()
	want := []string{
		"daily_20261201T090000Z Daily sync Dec 1 09:00", "daily_20261202T090000Z Daily sync Dec 2 09:00",
		"daily_20261203T090000Z Daily sync Dec 3 09:00",
	}
	if got := m.show(); !slices.Equal(got, want) {
		t.Errorf("mirror after the full sync of the moved window = %q, want %q", got, want)
	}
}

func TestSyncRefusesEmptyWindow(t *testing.T) {
	srv := newServer(t)
	srv.AddCalendar(alice)
	src, _ := newSource(t, srv, nil)
	if _, err := src.Sync(context.Background(), alice, "", calendar.Window{From: syncStart, Horizon: syncStart}); err == nil {
		t.Error("Sync(empty window) error = nil, want an error")
	}
	if n := srv.Requests(alice); n != 0 {
		t.Errorf("Sync(empty window) made %d requests, want 0", n)
	}
}
