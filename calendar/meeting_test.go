package calendar_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	gcal "google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

// TestMeetingReadsTheInstanceAgain changes meetings after a sweep read them
// and asks for each again, as a reminder about to go out would.
func TestMeetingReadsTheInstanceAgain(t *testing.T) {
	srv := newServer(t)
	start := window[0].Add(9 * time.Hour)
	for _, id := range []string{"same", "moved", "cancelled", "purged", "gone", "declined", "allday", "ooo"} {
		put(t, srv, alice, id, start, time.Hour)
	}
	series := calendartest.NewEvent("standup", "Standup", start, start.Add(15*time.Minute))
	series.Recurrence = []string{"RRULE:FREQ=DAILY;COUNT=3"}
	if err := srv.Put(alice, series); err != nil {
		t.Fatal(err)
	}
	src, rec := newSource(t, srv, nil)
	listed, err := src.Meetings(context.Background(), sub(alice), window[0], window[0].Add(72*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]meetingbot.Meeting{}
	for _, m := range listed {
		before[m.ID] = m
	}
	if len(before) != 11 {
		t.Fatalf("Meetings() = %v, want 8 meetings and 3 instances", ids(listed))
	}

	// What happens to them before their reminders are due.
	edit := func(id string, f func(*gcal.Event)) {
		t.Helper()
		ev, err := srv.Instance(alice, id)
		if err != nil {
			ev = calendartest.NewEvent(id, "Meeting "+id, start, start.Add(time.Hour))
		}
		f(ev)
		if err := srv.Put(alice, ev); err != nil {
			t.Fatal(err)
		}
	}
	later := start.Add(2 * time.Hour)
	edit("moved", func(ev *gcal.Event) {
		ev.Start.DateTime, ev.End.DateTime = later.Format(time.RFC3339), later.Add(time.Hour).Format(time.RFC3339)
	})
	edit("standup_20261201T090000Z", func(ev *gcal.Event) {
		ev.Start.DateTime, ev.End.DateTime = "2026-12-01T10:30:00Z", "2026-12-01T10:45:00Z"
	})
	edit("declined", func(ev *gcal.Event) {
		ev.Attendees = []*gcal.EventAttendee{{Email: alice, Self: true, ResponseStatus: "declined"}}
	})
	edit("allday", func(ev *gcal.Event) {
		ev.Start = &gcal.EventDateTime{Date: "2026-11-30"}
		ev.End = &gcal.EventDateTime{Date: "2026-12-01"}
	})
	edit("ooo", func(ev *gcal.Event) { ev.EventType = "outOfOffice" })
	for _, id := range []string{"cancelled", "standup_20261202T090000Z"} {
		if err := srv.Delete(alice, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.Purge(alice, "purged"); err != nil {
		t.Fatal(err)
	}
	srv.QueueGetFaults(alice, calendartest.Deleted) // the next get, of "gone"

	tests := []struct {
		id    string
		start time.Time // zero: gone
	}{
		{"gone", time.Time{}}, // 410 deleted
		{"same", start},
		{"moved", later},
		{"standup_20261130T090000Z", start},
		{"standup_20261201T090000Z", time.Date(2026, 12, 1, 10, 30, 0, 0, time.UTC)},
		{"standup_20261202T090000Z", time.Time{}},
		{"cancelled", time.Time{}},
		{"purged", time.Time{}}, // 404
		{"declined", time.Time{}},
		{"allday", time.Time{}},
		{"ooo", time.Time{}},
	}
	for _, tt := range tests {
		m, err := src.Meeting(context.Background(), sub(alice), tt.id)
		if tt.start.IsZero() {
			if !errors.Is(err, meetingbot.ErrGone) || meetingbot.IsPermanent(err) {
				t.Errorf("Meeting(%s) = %v, %v; want an error matching ErrGone, not permanent", tt.id, m.Start, err)
			}
			continue
		}
		want := before[tt.id]
		want.Start, want.End = tt.start, tt.start.Add(want.End.Sub(want.Start))
		if err != nil || !m.Start.Equal(want.Start) || m.ID != want.ID || m.KeyID() != want.KeyID() ||
			m.Title != want.Title || m.HTMLLink != want.HTMLLink || m.Organizer != want.Organizer || !m.End.Equal(want.End) {
			t.Errorf("Meeting(%s) = %+v, %v; want %+v", tt.id, m, err, want)
		}
	}
	if n := srv.RequestsTo(calendartest.MethodGet); n != len(tests) {
		t.Errorf("events.get requests = %d, want %d", n, len(tests))
	}
	var gets []string
	for _, c := range rec.observed() {
		if strings.HasPrefix(c, "events.get") {
			gets = append(gets, c)
		}
	}
	if want := slices.Repeat([]string{"events.get:ok"}, len(tests)); !slices.Equal(gets, want) {
		t.Errorf("Observe calls = %v, want %v: a meeting gone is an answer, not a failure", gets, want)
	}
}

func TestMeetingRetriesAndExplains(t *testing.T) {
	srv := newServer(t)
	put(t, srv, alice, "m1", window[0].Add(time.Hour), time.Hour)
	src, rec := newSource(t, srv, func(c *calendar.Config) { c.Retry.Base = 100 * time.Millisecond })

	srv.QueueGetFaults(alice, calendartest.ServerError, calendartest.RateLimited, calendartest.Drop, calendartest.Unauthorized)
	m, err := src.Meeting(context.Background(), sub(alice), "m1")
	if err != nil || m.ID != "m1" {
		t.Fatalf("Meeting(m1) after faults = %+v, %v; want m1", m, err)
	}
	want := []string{"events.get:server_error", "events.get:rate_limited", "events.get:network", "events.get:permanent", "events.get:ok"}
	if got := rec.observed(); !slices.Equal(got, want) {
		t.Errorf("Observe calls = %v, want %v", got, want)
	}
	if len(rec.sleeps) != 3 {
		t.Errorf("sleeps = %v, want 3 backoffs (a 401 renews the token at once)", rec.sleeps)
	}

	srv.QueueGetFaults(alice, calendartest.Forbidden)
	_, err = src.Meeting(context.Background(), sub(alice), "m1")
	wantErr := "calendar alice@example.com: access denied: share alice@example.com's calendar with bot@meetingbot-test.iam.gserviceaccount.com"
	if !meetingbot.IsPermanent(err) || errors.Is(err, meetingbot.ErrGone) || !strings.Contains(err.Error(), wantErr) {
		t.Errorf("Meeting(m1) on 403 = %v, want permanent, not gone, containing %q", err, wantErr)
	}
}

func TestMeetingImpersonates(t *testing.T) {
	srv := newServer(t)
	const bob = "bob@example.com"
	put(t, srv, bob, "m-bob", window[0].Add(time.Hour), time.Hour)
	srv.Share(bob, bob) // readable by its owner only
	src, _ := newSource(t, srv, func(c *calendar.Config) { c.Impersonate = true })
	if m, err := src.Meeting(context.Background(), sub(bob), "m-bob"); err != nil || m.ID != "m-bob" {
		t.Errorf("Meeting(m-bob) as bob = %+v, %v; want m-bob", m, err)
	}
	if got := srv.Subjects(); !slices.Equal(got, []string{bob}) {
		t.Errorf("Subjects() = %q, want [%s]", got, bob)
	}
}
