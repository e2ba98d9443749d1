package calendartest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
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
