package calendar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"google.golang.org/api/calendar/v3"
)

var fixturePage = filepath.Join("..", "testdata", "calendar", "events_page.json")

func loadPage(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile(fixturePage)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestAppendMeetingsFixture(t *testing.T) {
	var page calendar.Events
	if err := json.Unmarshal(loadPage(t), &page); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	from := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	got := appendMeetings(nil, page.Items, from, from.Add(24*time.Hour), "alice@example.com", log)

	var ids []string
	for _, m := range got {
		ids = append(ids, m.ID)
	}
	want := []string{
		"4u1h0bq5k0mfkhq6u3e0g8p2cs_20261130T090000Z", // instance, accepted
		"7kq1r3b8dlp5q9tbf2vj5n0e1a",                  // no attendees
		"oooab12cd34ef56gh",                           // outOfOffice, timed: marked, for statuses only
		"gmailab12cd34ef56g",                          // fromGmail
		"freeab12cd34ef56gh",                          // free/busy transparent, tentative
		"notitleab12cd34ef5",                          // no title, -05:00
	}
	// Not meetings: cancelled, all-day, declined, focusTime,
	// workingLocation, birthday. Unreadable: a bad dateTime, no id.
	if !slices.Equal(ids, want) {
		t.Errorf("appendMeetings(fixture) IDs = %v, want %v", ids, want)
	}
	for _, line := range []string{`calendar=alice@example.com event=badtimeab12cd34ef5`, `calendar=alice@example.com event=""`} {
		if !strings.Contains(logs.String(), line) {
			t.Errorf("logs = %q, want a line with %q", logs.String(), line)
		}
	}

	berlin := time.FixedZone("", 3600)
	wantFirst := meetingbot.Meeting{
		ID:        "4u1h0bq5k0mfkhq6u3e0g8p2cs_20261130T090000Z",
		Title:     "Team sync",
		Start:     time.Date(2026, 11, 30, 10, 0, 0, 0, berlin),
		End:       time.Date(2026, 11, 30, 10, 30, 0, 0, berlin),
		HTMLLink:  "https://www.google.com/calendar/event?eid=NHUxaDBicTVrMG1ma2hxNnUzZTBnOHAyY3NfMjAyNjExMzBUMDkwMDAwWiBhbGljZUBleGFtcGxlLmNvbQ",
		JoinURL:   "https://meet.google.com/abc-defg-hij",
		Organizer: "Bob Builder",
		Updated:   time.Date(2026, 11, 20, 7, 32, 47, 431e6, time.UTC),
	}
	if m := got[0]; !sameMeeting(m, wantFirst) {
		t.Errorf("appendMeetings(fixture)[0] = %+v, want %+v", m, wantFirst)
	}
	byID := map[string]meetingbot.Meeting{}
	for _, m := range got {
		byID[m.ID] = m
		if m.OutOfOffice != (m.ID == "oooab12cd34ef56gh") {
			t.Errorf("%s: OutOfOffice = %v", m.ID, m.OutOfOffice)
		}
	}
	if n := len(meetingbot.ForSubscription(meetingbot.Subscription{}, got)); n != len(want)-1 {
		t.Errorf("ForSubscription(a reminder subscription) kept %d meetings, want %d: an out-of-office event is no meeting to remind of", n, len(want)-1)
	}
	checks := []struct {
		id, field, got, want string
	}{
		{"notitleab12cd34ef5", "Title", byID["notitleab12cd34ef5"].Title, "(No title)"},
		{"notitleab12cd34ef5", "Start", byID["notitleab12cd34ef5"].Start.UTC().Format(time.RFC3339), "2026-11-30T17:30:00Z"},
		{"notitleab12cd34ef5", "JoinURL", byID["notitleab12cd34ef5"].JoinURL, "https://teams.microsoft.com/l/meetup-join/19%3ameeting_NjQ0%40thread.v2/0?context=%7b%22Tid%22%3a%22t%22%7d"},
		{"notitleab12cd34ef5", "Organizer", byID["notitleab12cd34ef5"].Organizer, "carol@example.com"},
		{"freeab12cd34ef56gh", "JoinURL", byID["freeab12cd34ef56gh"].JoinURL, "https://us02web.zoom.us/j/85512345678?pwd=aBcDeF123"},
		{"7kq1r3b8dlp5q9tbf2vj5n0e1a", "JoinURL", byID["7kq1r3b8dlp5q9tbf2vj5n0e1a"].JoinURL, "https://meet.google.com/xyz-abcd-efg"},
		{"gmailab12cd34ef56g", "End", byID["gmailab12cd34ef56g"].End.UTC().Format(time.RFC3339), "2026-11-30T19:00:00Z"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("meeting %s: %s = %q, want %q", c.id, c.field, c.got, c.want)
		}
	}
}

// sameMeeting compares meetings by instants, not zones.
func sameMeeting(a, b meetingbot.Meeting) bool {
	return a.ID == b.ID && a.Instance == b.Instance && a.Title == b.Title && a.Start.Equal(b.Start) && a.End.Equal(b.End) &&
		a.HTMLLink == b.HTMLLink && a.JoinURL == b.JoinURL && a.Organizer == b.Organizer && a.Updated.Equal(b.Updated)
}

// TestMeetingInstanceAcrossSplit names an instance of a series split off
// another ("this and following events") as the first series named it, and
// leaves every other event to its id.
func TestMeetingInstanceAcrossSplit(t *testing.T) {
	orig := &calendar.EventDateTime{DateTime: "2026-12-01T10:00:00+01:00", TimeZone: "Europe/Berlin"}
	tests := []struct {
		id, series string
		orig       *calendar.EventDateTime
		want       string // Meeting.Instance; "" for the ID
	}{
		{"single0001", "", nil, ""},
		{"abc_20261201T090000Z", "abc", orig, ""}, // an unsplit series
		{"abc_R20261130T090000_20261201T090000Z", "abc_R20261130T090000", orig, "abc_20261201T090000Z"},
		{"abc_R20261130T090000Z_20261201T090000Z", "abc_R20261130T090000Z", orig, "abc_20261201T090000Z"},
		{"abc_R20261130_20261201T090000Z", "abc_R20261130", orig, "abc_20261201T090000Z"},
		// Split twice: the first series still names it.
		{"abc_R20261130T090000_R20261201T090000_20261201T090000Z", "abc_R20261130T090000_R20261201T090000", orig, "abc_20261201T090000Z"},
		// Moved after the split: the original start names it, the start moves its keys.
		{"abc_R20261130T090000_20261201T090000Z", "abc_R20261130T090000", &calendar.EventDateTime{DateTime: "2026-12-01T09:00:00Z"}, "abc_20261201T090000Z"},
		{"abc_R20261130T090000_20261201T090000Z", "abc_R20261130T090000", nil, ""},
		{"abc_R20261130T090000_20261201T090000Z", "abc_R20261130T090000", &calendar.EventDateTime{DateTime: "soon"}, ""},
		{"abc_Rxyz_20261201T090000Z", "abc_Rxyz", orig, ""}, // not Google's split form
	}
	for _, tt := range tests {
		ev := &calendar.Event{
			Id: tt.id, Status: "confirmed", RecurringEventId: tt.series, OriginalStartTime: tt.orig,
			Start: &calendar.EventDateTime{DateTime: "2026-12-01T11:00:00+01:00"},
			End:   &calendar.EventDateTime{DateTime: "2026-12-01T11:30:00+01:00"},
		}
		m, ok, err := meeting(ev)
		if !ok || err != nil || m.ID != tt.id || m.Instance != tt.want {
			t.Errorf("meeting(%s of %s) = ID %q, Instance %q, %v, %v; want ID %q, Instance %q", tt.id, tt.series, m.ID, m.Instance, ok, err, tt.id, tt.want)
		}
		// The series is the first series' ID, split or not, so that a
		// muted series stays muted after a split.
		wantSeries := ""
		if tt.series != "" {
			wantSeries = "abc"
			if tt.series == "abc_Rxyz" {
				wantSeries = "abc_Rxyz"
			}
		}
		if m.Series != wantSeries {
			t.Errorf("meeting(%s of %s).Series = %q, want %q", tt.id, tt.series, m.Series, wantSeries)
		}
	}
}

func TestMeetingFilters(t *testing.T) {
	timed := func(mut func(*calendar.Event)) *calendar.Event {
		ev := &calendar.Event{
			Id:     "ev1",
			Status: "confirmed",
			Start:  &calendar.EventDateTime{DateTime: "2026-11-30T10:00:00+01:00"},
			End:    &calendar.EventDateTime{DateTime: "2026-11-30T11:00:00+01:00"},
		}
		mut(ev)
		return ev
	}
	self := func(status string) []*calendar.EventAttendee {
		return []*calendar.EventAttendee{{Email: "o@example.com", ResponseStatus: "declined"}, {Self: true, ResponseStatus: status}}
	}
	tests := []struct {
		name    string
		ev      *calendar.Event
		wantOK  bool
		wantErr bool
	}{
		{"confirmed", timed(func(*calendar.Event) {}), true, false},
		{"tentative", timed(func(e *calendar.Event) { e.Status = "tentative" }), true, false},
		{"cancelled", timed(func(e *calendar.Event) { e.Status = "cancelled" }), false, false},
		{"all-day", timed(func(e *calendar.Event) {
			e.Start = &calendar.EventDateTime{Date: "2026-11-30"}
			e.End = &calendar.EventDateTime{Date: "2026-12-01"}
		}), false, false},
		{"declined by owner", timed(func(e *calendar.Event) { e.Attendees = self("declined") }), false, false},
		{"accepted by owner, declined by other", timed(func(e *calendar.Event) { e.Attendees = self("accepted") }), true, false},
		{"needsAction", timed(func(e *calendar.Event) { e.Attendees = self("needsAction") }), true, false},
		{"free", timed(func(e *calendar.Event) { e.Transparency = "transparent" }), true, false},
		{"default", timed(func(e *calendar.Event) { e.EventType = "default" }), true, false},
		{"fromGmail", timed(func(e *calendar.Event) { e.EventType = "fromGmail" }), true, false},
		{"outOfOffice", timed(func(e *calendar.Event) { e.EventType = "outOfOffice" }), true, false}, // marked OutOfOffice
		{"outOfOffice all day", timed(func(e *calendar.Event) {
			e.EventType = "outOfOffice"
			e.Start = &calendar.EventDateTime{Date: "2026-11-30"}
			e.End = &calendar.EventDateTime{Date: "2026-12-01"}
		}), false, false},
		{"focusTime", timed(func(e *calendar.Event) { e.EventType = "focusTime" }), false, false},
		{"workingLocation", timed(func(e *calendar.Event) { e.EventType = "workingLocation" }), false, false},
		{"birthday", timed(func(e *calendar.Event) { e.EventType = "birthday" }), false, false},
		{"missing id", timed(func(e *calendar.Event) { e.Id = "" }), false, true},
		{"bad start", timed(func(e *calendar.Event) { e.Start.DateTime = "2026-11-30 10:00" }), false, true},
		{"no offset", timed(func(e *calendar.Event) { e.Start.DateTime = "2026-11-30T10:00:00" }), false, true},
		{"missing end", timed(func(e *calendar.Event) { e.End = nil }), false, true},
		{"ends before start", timed(func(e *calendar.Event) { e.End.DateTime = "2026-11-30T09:00:00+01:00" }), false, true},
	}
	for _, tt := range tests {
		_, ok, err := meeting(tt.ev)
		if ok != tt.wantOK || (err != nil) != tt.wantErr {
			t.Errorf("%s: meeting() = %v, %v; want %v, error %v", tt.name, ok, err, tt.wantOK, tt.wantErr)
		}
	}
}

// BenchmarkDecodeFilterPage decodes a full 2,500-event page, as events.list
// returns at most, and filters it.
func BenchmarkDecodeFilterPage(b *testing.B) {
	var page struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(loadPage(b), &page); err != nil {
		b.Fatal(err)
	}
	items := make([]json.RawMessage, 0, 2500)
	for i := 0; len(items) < 2500; i++ {
		raw := page.Items[i%len(page.Items)]
		items = append(items, bytes.Replace(raw, []byte(`"id": "`), fmt.Appendf(nil, `"id": "n%d`, i), 1))
	}
	body, err := json.Marshal(map[string]any{"kind": "calendar#events", "items": items})
	if err != nil {
		b.Fatal(err)
	}
	from := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	log := slog.New(slog.DiscardHandler)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	var n int
	for b.Loop() {
		var p calendar.Events
		if err := json.Unmarshal(body, &p); err != nil {
			b.Fatal(err)
		}
		n = len(appendMeetings(nil, p.Items, from, from.Add(24*time.Hour), "alice@example.com", log))
	}
	b.ReportMetric(float64(n), "meetings/page")
}

// TestMeetingSaysWhereAndWhoBooked: a channel's change notices say where
// an event is and who made it (on a room's calendar, who booked it); a
// creator without a name falls back to the organizer's when they are the
// same person, never to someone else's.
func TestMeetingSaysWhereAndWhoBooked(t *testing.T) {
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name            string
		creator         *calendar.EventCreator
		organizer       *calendar.EventOrganizer
		wantName, wantE string
	}{
		{"creator named", &calendar.EventCreator{Email: "bob@example.com", DisplayName: "Bob"}, &calendar.EventOrganizer{Email: "room@resource.calendar.google.com", DisplayName: "Room 1"}, "Bob", "bob@example.com"},
		{"creator unnamed, organizer the same", &calendar.EventCreator{Email: "bob@example.com"}, &calendar.EventOrganizer{Email: "bob@example.com", DisplayName: "Bob B."}, "Bob B.", "bob@example.com"},
		{"creator unnamed, organizer another", &calendar.EventCreator{Email: "bob@example.com"}, &calendar.EventOrganizer{Email: "ann@example.com", DisplayName: "Ann"}, "", "bob@example.com"},
		{"no creator", nil, &calendar.EventOrganizer{Email: "ann@example.com", DisplayName: "Ann"}, "Ann", "ann@example.com"},
	}
	for _, tt := range tests {
		ev := &calendar.Event{Id: "e1", Status: "confirmed", Summary: "Standup", Location: "Room 1 <3rd floor>",
			Start: &calendar.EventDateTime{DateTime: start.Format(time.RFC3339)}, End: &calendar.EventDateTime{DateTime: start.Add(time.Hour).Format(time.RFC3339)},
			Creator: tt.creator, Organizer: tt.organizer}
		m, ok, err := meeting(ev)
		if err != nil || !ok {
			t.Fatalf("%s: meeting() = %v, %v", tt.name, ok, err)
		}
		if m.Location != "Room 1 <3rd floor>" || m.Creator != tt.wantName || m.CreatorEmail != tt.wantE {
			t.Errorf("%s: meeting() = location %q, creator %q <%s>, want %q, %q <%s>", tt.name, m.Location, m.Creator, m.CreatorEmail, "Room 1 <3rd floor>", tt.wantName, tt.wantE)
		}
	}
}
