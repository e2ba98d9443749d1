package calendartest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/calendar/v3"
)

// client returns an HTTP client authorized as the server's service account.
func client(t *testing.T, s *Server) *http.Client {
	t.Helper()
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, s.Client())
	creds, err := google.CredentialsFromJSONWithTypeAndParams(ctx, s.ServiceAccountJSON(), google.ServiceAccount,
		google.CredentialsParams{Scopes: []string{calendar.CalendarReadonlyScope}})
	if err != nil {
		t.Fatal(err)
	}
	return oauth2.NewClient(ctx, creds.TokenSource)
}

// getEvent asks events.get for eventID in calendarID with q and returns the
// status, the body as a JSON object and the error, if any.
func getEvent(t *testing.T, c *http.Client, s *Server, calendarID, eventID string, q url.Values) (int, map[string]any, errorBody) {
	t.Helper()
	resp, err := c.Get(s.Endpoint() + "calendars/" + url.PathEscape(calendarID) + "/events/" + url.PathEscape(eventID) + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	var eb errorBody
	if resp.StatusCode == http.StatusOK {
		err = json.Unmarshal(b, &ev)
	} else {
		err = json.Unmarshal(b, &eb)
	}
	if err != nil {
		t.Fatalf("events.get %s: %v in %s", eventID, err, b)
	}
	return resp.StatusCode, ev, eb
}

func TestGet(t *testing.T) {
	const cal = "a@example.com"
	s := NewServer()
	defer s.Close()
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	for _, ev := range []*calendar.Event{
		NewEvent("single", "Single", start, start.Add(time.Hour)),
		NewEvent("deleted", "Deleted", start, start.Add(time.Hour)),
		NewEvent("purged", "Purged", start, start.Add(time.Hour)),
	} {
		if err := s.Put(cal, ev); err != nil {
			t.Fatal(err)
		}
	}
	series := NewEvent("standup", "Standup", start, start.Add(15*time.Minute))
	series.Recurrence = []string{"RRULE:FREQ=DAILY;COUNT=5"}
	if err := s.Put(cal, series); err != nil {
		t.Fatal(err)
	}
	moved, err := s.Instance(cal, "standup_20261103T090000Z")
	if err != nil {
		t.Fatal(err)
	}
	moved.Start.DateTime, moved.End.DateTime = "2026-11-03T11:00:00Z", "2026-11-03T11:15:00Z"
	if err := s.Put(cal, moved); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"deleted", "standup_20261104T090000Z"} {
		if err := s.Delete(cal, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Purge(cal, "purged"); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		id         string
		code       int
		status     string // of the event answered
		start      string
		recurrence string // recurringEventId
	}{
		{id: "single", code: 200, status: "confirmed", start: "2026-11-02T09:00:00Z"},
		{id: "standup_20261102T090000Z", code: 200, status: "confirmed", start: "2026-11-02T09:00:00Z", recurrence: "standup"},
		{id: "standup_20261103T090000Z", code: 200, status: "confirmed", start: "2026-11-03T11:00:00Z", recurrence: "standup"},
		{id: "standup_20261104T090000Z", code: 200, status: "cancelled", start: "2026-11-04T09:00:00Z", recurrence: "standup"},
		{id: "standup", code: 200, status: "confirmed", start: "2026-11-02T09:00:00Z"},
		{id: "deleted", code: 200, status: "cancelled", start: "2026-11-02T09:00:00Z"},
		{id: "purged", code: 404},
		{id: "standup_20261110T090000Z", code: 404}, // after COUNT=5
		{id: "standup_20261102T091500Z", code: 404}, // not an occurrence
		{id: "never", code: 404},
	}
	c := client(t, s)
	for _, tt := range tests {
		code, ev, eb := getEvent(t, c, s, cal, tt.id, nil)
		if code != tt.code {
			t.Errorf("events.get %s = %d %+v, want %d", tt.id, code, eb, tt.code)
			continue
		}
		if code != 200 {
			if eb.Error.Errors[0].Reason != "notFound" {
				t.Errorf("events.get %s reason = %q, want notFound", tt.id, eb.Error.Errors[0].Reason)
			}
			continue
		}
		startTime, _ := ev["start"].(map[string]any)["dateTime"].(string)
		if ev["id"] != tt.id || ev["status"] != tt.status || startTime != tt.start || (ev["recurringEventId"] != nil) != (tt.recurrence != "") {
			t.Errorf("events.get %s = id %v status %v start %v recurringEventId %v; want %s %s %s %q",
				tt.id, ev["id"], ev["status"], startTime, ev["recurringEventId"], tt.id, tt.status, tt.start, tt.recurrence)
		}
	}
	if n := s.RequestsTo(MethodGet); n != len(tests) {
		t.Errorf("RequestsTo(events.get) = %d, want %d", n, len(tests))
	}
	if n := s.RequestsTo(MethodList); n != 0 {
		t.Errorf("RequestsTo(events.list) = %d, want 0", n)
	}
}

func TestGetFieldsAndRefusals(t *testing.T) {
	const cal = "a@example.com"
	s := NewServer()
	defer s.Close()
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	if err := s.Put(cal, NewEvent("m", "Meeting", start, start.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	c := client(t, s)

	code, ev, _ := getEvent(t, c, s, cal, "m", url.Values{"fields": {"id,status,start(dateTime)"}})
	if code != 200 || len(ev) != 3 || ev["summary"] != nil || len(ev["start"].(map[string]any)) != 1 {
		t.Errorf("events.get(fields=id,status,start(dateTime)) = %d %v, want only those fields", code, ev)
	}
	if code, _, eb := getEvent(t, c, s, cal, "m", url.Values{"fields": {"items(id)"}}); code != 400 || eb.Error.Errors[0].Reason != "invalidParameter" {
		t.Errorf("events.get(fields=items(id)) = %d %+v, want 400 invalidParameter: items is events.list's", code, eb)
	}
	if err := s.CheckRequests(); err == nil || !strings.Contains(err.Error(), "Invalid field selection items") {
		t.Errorf("CheckRequests() = %v, want events.get(fields=items(id)) refused by the discovery document", err)
	}

	s.QueueGetFaults(cal, Deleted)
	if code, _, eb := getEvent(t, c, s, cal, "m", nil); code != 410 || eb.Error.Errors[0].Reason != "deleted" {
		t.Errorf("events.get after QueueGetFaults(Deleted) = %d %+v, want 410 deleted", code, eb)
	}
	if code, _, _ := getEvent(t, c, s, cal, "m", nil); code != 200 {
		t.Errorf("events.get after the fault = %d, want 200", code)
	}

	s.Share(cal, "someone-else@example.com")
	if code, _, eb := getEvent(t, c, s, cal, "m", nil); code != 404 || eb.Error.Errors[0].Reason != "notFound" {
		t.Errorf("events.get of a calendar not shared = %d %+v, want 404 notFound", code, eb)
	}
}

// TestLatencyIsConcurrent checks that a latency delays each request by
// itself: ten requests at once take about one latency, not ten.
func TestLatencyIsConcurrent(t *testing.T) {
	const cal = "a@example.com"
	s := NewServer()
	defer s.Close()
	s.AddCalendar(cal)
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	if err := s.Put(cal, NewEvent("m", "Meeting", start, start.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	c := client(t, s)
	getEvent(t, c, s, cal, "m", nil) // fetch the token before timing

	const latency, n = 300 * time.Millisecond, 10
	s.SetLatency(latency)
	began := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if i%2 == 0 {
				if code, _, _ := getEvent(t, c, s, cal, "m", nil); code != 200 {
					t.Errorf("events.get = %d, want 200", code)
				}
				return
			}
			resp, err := c.Get(s.Endpoint() + "calendars/" + url.PathEscape(cal) + "/events")
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		})
	}
	wg.Wait()
	took := time.Since(began)
	if took < latency || took >= n/2*latency {
		t.Errorf("%d requests at once with latency %v took %v, want at least %v and well under %v", n, latency, took, latency, n*latency)
	}
	if got := s.RequestsTo(MethodGet) + s.RequestsTo(MethodList); got != n+1 {
		t.Errorf("requests counted = %d, want %d", got, n+1)
	}
}
