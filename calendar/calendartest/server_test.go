package calendartest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/calendar/v3"
)

// get lists calendarID with q, authorized as the server's service account.
func get(t *testing.T, s *Server, calendarID string, q url.Values) (int, calendar.Events, errorBody) {
	t.Helper()
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, s.Client())
	creds, err := google.CredentialsFromJSONWithTypeAndParams(ctx, s.ServiceAccountJSON(), google.ServiceAccount,
		google.CredentialsParams{Scopes: []string{calendar.CalendarReadonlyScope}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := oauth2.NewClient(ctx, creds.TokenSource).Get(s.Endpoint() + "calendars/" + url.PathEscape(calendarID) + "/events?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page calendar.Events
	var eb errorBody
	if resp.StatusCode == http.StatusOK {
		err = json.NewDecoder(resp.Body).Decode(&page)
	} else {
		err = json.NewDecoder(resp.Body).Decode(&eb)
	}
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, page, eb
}

func TestListRefusesStartTimeOrderWithoutSingleEvents(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.AddCalendar("a@example.com")
	code, _, eb := get(t, s, "a@example.com", url.Values{"orderBy": {"startTime"}})
	if code != http.StatusBadRequest || eb.Error.Errors[0].Reason != "badRequest" {
		t.Errorf("list(orderBy=startTime) = %d %+v, want 400 badRequest", code, eb)
	}
}

func TestListUnknownCalendarIsNotFound(t *testing.T) {
	s := NewServer()
	defer s.Close()
	code, _, eb := get(t, s, "nobody@example.com", nil)
	if code != http.StatusNotFound || eb.Error.Code != 404 || eb.Error.Errors[0].Reason != "notFound" {
		t.Errorf("list(unknown) = %d %+v, want 404 notFound", code, eb)
	}
}

func TestListSeries(t *testing.T) {
	s := NewServer()
	defer s.Close()
	berlin, _ := time.LoadLocation("Europe/Berlin")
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, berlin)
	ev := NewEvent("standup", "Standup", start, start.Add(15*time.Minute))
	ev.Recurrence = []string{"RRULE:FREQ=DAILY;COUNT=5"}
	if err := s.Put("a@example.com", ev); err != nil {
		t.Fatal(err)
	}
	moved, err := s.Instance("a@example.com", "standup_20261103T080000Z")
	if err != nil {
		t.Fatal(err)
	}
	moved.Start.DateTime = "2026-11-03T11:00:00+01:00"
	moved.End.DateTime = "2026-11-03T11:15:00+01:00"
	if err := s.Put("a@example.com", moved); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("a@example.com", "standup_20261104T080000Z"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		q    url.Values
		want []string
	}{
		{url.Values{"singleEvents": {"true"}, "orderBy": {"startTime"}},
			[]string{"standup_20261102T080000Z", "standup_20261103T080000Z", "standup_20261105T080000Z", "standup_20261106T080000Z"}},
		{url.Values{"singleEvents": {"true"}, "showDeleted": {"true"}, "orderBy": {"startTime"}},
			[]string{"standup_20261102T080000Z", "standup_20261103T080000Z", "standup_20261104T080000Z", "standup_20261105T080000Z", "standup_20261106T080000Z"}},
		// Unexpanded: the series, the moved instance and, as documented,
		// the cancelled one.
		{url.Values{}, []string{"standup", "standup_20261103T080000Z", "standup_20261104T080000Z"}},
		// timeMin bounds the end, timeMax the start, both exclusive.
		{url.Values{"singleEvents": {"true"}, "timeMin": {"2026-11-02T08:15:00Z"}, "timeMax": {"2026-11-05T08:00:00Z"}},
			[]string{"standup_20261103T080000Z"}},
		{url.Values{"singleEvents": {"true"}, "timeMin": {"2026-11-02T08:14:59Z"}, "timeMax": {"2026-11-05T08:00:01Z"}, "orderBy": {"startTime"}},
			[]string{"standup_20261102T080000Z", "standup_20261103T080000Z", "standup_20261105T080000Z"}},
	}
	for _, tt := range tests {
		code, page, eb := get(t, s, "a@example.com", tt.q)
		if code != http.StatusOK {
			t.Fatalf("list(%v) = %d %+v", tt.q, code, eb)
		}
		var got []string
		for _, ev := range page.Items {
			got = append(got, ev.Id)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("list(%v) = %v, want %v", tt.q, got, tt.want)
		}
	}
}

func TestWallClockFallBack(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	tests := []struct {
		day  int
		hour int
		want string
	}{
		{25, 2, "2026-10-25T02:30:00+02:00"}, // occurs twice: the first
		{25, 3, "2026-10-25T03:30:00+01:00"},
		{24, 2, "2026-10-24T02:30:00+02:00"},
	}
	for _, tt := range tests {
		if got := wallClock(2026, 10, tt.day, tt.hour, 30, 0, berlin).Format(time.RFC3339); got != tt.want {
			t.Errorf("wallClock(2026-10-%d %d:30) = %v, want %v", tt.day, tt.hour, got, tt.want)
		}
	}
	if got := wallClock(2026, 3, 29, 2, 30, 0, berlin).UTC().Format(time.RFC3339); got != "2026-03-29T01:30:00Z" {
		t.Errorf("wallClock(2026-03-29 02:30) = %v, want %v", got, "2026-03-29T01:30:00Z")
	}
}

// TestSplitFollowing edits "this and following events" from the third of
// five daily instances: the old series keeps two, a new series with its own
// ids takes the other three, and the moved exception past the split goes.
func TestSplitFollowing(t *testing.T) {
	s := NewServer()
	defer s.Close()
	const cal = "a@example.com"
	berlin, _ := time.LoadLocation("Europe/Berlin")
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, berlin)
	ev := NewEvent("standup", "Standup", start, start.Add(15*time.Minute))
	ev.Recurrence = []string{"RRULE:FREQ=DAILY;COUNT=5"}
	if err := s.Put(cal, ev); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"standup_20261201T080000Z", "standup_20261203T080000Z"} {
		moved, err := s.Instance(cal, id)
		if err != nil {
			t.Fatal(err)
		}
		moved.Summary = "Standup (moved)"
		if err := s.Put(cal, moved); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.SplitFollowing(cal, "standup_20261130T080000Z", nil); err == nil {
		t.Errorf("SplitFollowing(first instance) = nil error, want one: that edits the whole series")
	}
	next, err := s.SplitFollowing(cal, "standup_20261202T080000Z", func(ev *calendar.Event) { ev.Summary = "Standup in room 2" })
	if err != nil {
		t.Fatal(err)
	}
	if next.Id != "standup_R20261202T080000" || next.ICalUID != "standup_R20261202T080000@google.com" ||
		!slices.Equal(next.Recurrence, []string{"RRULE:FREQ=DAILY;COUNT=3"}) || next.Start.DateTime != "2026-12-02T09:00:00+01:00" {
		t.Errorf("SplitFollowing() = id %s, iCalUID %s, recurrence %v, start %s; want standup_R20261202T080000, its own iCalUID, COUNT=3 from 2026-12-02T09:00:00+01:00",
			next.Id, next.ICalUID, next.Recurrence, next.Start.DateTime)
	}

	code, page, eb := get(t, s, cal, url.Values{"singleEvents": {"true"}, "orderBy": {"startTime"}})
	if code != http.StatusOK {
		t.Fatalf("list = %d %+v", code, eb)
	}
	var got []string
	for _, ev := range page.Items {
		got = append(got, ev.Id+" "+ev.RecurringEventId+" "+ev.OriginalStartTime.DateTime+" "+ev.Summary)
	}
	want := []string{
		"standup_20261130T080000Z standup 2026-11-30T09:00:00+01:00 Standup",
		"standup_20261201T080000Z standup 2026-12-01T09:00:00+01:00 Standup (moved)",
		"standup_R20261202T080000_20261202T080000Z standup_R20261202T080000 2026-12-02T09:00:00+01:00 Standup in room 2",
		"standup_R20261202T080000_20261203T080000Z standup_R20261202T080000 2026-12-03T09:00:00+01:00 Standup in room 2",
		"standup_R20261202T080000_20261204T080000Z standup_R20261202T080000 2026-12-04T09:00:00+01:00 Standup in room 2",
	}
	if !slices.Equal(got, want) {
		t.Errorf("list after split =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	code, page, _ = get(t, s, cal, url.Values{})
	got = nil
	for _, ev := range page.Items {
		got = append(got, ev.Id+" "+strings.Join(ev.Recurrence, ""))
	}
	want = []string{"standup RRULE:FREQ=DAILY;UNTIL=20261202T075959Z", "standup_20261201T080000Z ", "standup_R20261202T080000 RRULE:FREQ=DAILY;COUNT=3"}
	if code != http.StatusOK || !slices.Equal(got, want) {
		t.Errorf("list unexpanded after split = %d %q, want %q", code, got, want)
	}
}

// TestListFields answers with only the fields the request's mask selects,
// and refuses a mask naming a field events.list does not have.
func TestListFields(t *testing.T) {
	s := NewServer()
	defer s.Close()
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	if err := s.Put("a@example.com", NewEvent("standup", "Standup", start, start.Add(15*time.Minute))); err != nil {
		t.Fatal(err)
	}
	code, page, eb := get(t, s, "a@example.com", url.Values{"fields": {"nextPageToken,items(id,start/dateTime,organizer(email))"}})
	if code != http.StatusOK || len(page.Items) != 1 {
		t.Fatalf("list(fields) = %d %+v %+v", code, page, eb)
	}
	ev := page.Items[0]
	if page.Kind != "" || ev.Id != "standup" || ev.Summary != "" || ev.Start.DateTime != "2026-11-30T09:00:00Z" || ev.End != nil ||
		ev.Organizer.Email != "organizer@example.com" || ev.Organizer.DisplayName != "" {
		t.Errorf("list(fields) = %+v item %+v, want only id, start.dateTime and organizer.email", page, ev)
	}
	for _, bad := range []string{"items(id,startTime)", "items(id", "items(start(when))", "items//id"} {
		code, _, eb := get(t, s, "a@example.com", url.Values{"fields": {bad}})
		if code != http.StatusBadRequest || eb.Error.Errors[0].Reason != "invalidParameter" {
			t.Errorf("list(fields=%s) = %d %+v, want 400 invalidParameter", bad, code, eb)
		}
	}
	if err := s.CheckRequests(); err == nil || strings.Count(err.Error(), "\n") != 3 {
		t.Errorf("CheckRequests() = %v, want the 4 requests the discovery document refuses", err)
	}
}
