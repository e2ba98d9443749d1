package calendartest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"google.golang.org/api/calendar/v3"
)

// listInstances asks events.instances for eventID's instances with q and
// returns the status, the page and the error, if any.
func listInstances(t *testing.T, s *Server, calendarID, eventID string, q url.Values) (int, calendar.Events, errorBody) {
	t.Helper()
	resp, err := client(t, s).Get(s.Endpoint() + "calendars/" + url.PathEscape(calendarID) + "/events/" + url.PathEscape(eventID) + "/instances?" + q.Encode())
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

func idStatus(items []*calendar.Event) []string {
	var out []string
	for _, ev := range items {
		out = append(out, ev.Id+" "+ev.Status+" "+ev.Start.DateTime)
	}
	return out
}

func TestInstances(t *testing.T) {
	const cal = "a@example.com"
	s := NewServer()
	defer s.Close()
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	ev := NewEvent("standup", "Standup", start, start.Add(15*time.Minute))
	ev.Recurrence = []string{"RRULE:FREQ=DAILY;COUNT=4"}
	single := NewEvent("single", "Single", start, start.Add(time.Hour))
	for _, e := range []*calendar.Event{ev, single} {
		if err := s.Put(cal, e); err != nil {
			t.Fatal(err)
		}
	}
	moved, err := s.Instance(cal, "standup_20261103T090000Z")
	if err != nil {
		t.Fatal(err)
	}
	moved.Start.DateTime, moved.End.DateTime = "2026-11-03T11:00:00Z", "2026-11-03T11:15:00Z"
	if err := s.Put(cal, moved); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(cal, "standup_20261104T090000Z"); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		q    url.Values
		want []string
	}{
		{"all", nil, []string{
			"standup_20261102T090000Z confirmed 2026-11-02T09:00:00Z", "standup_20261103T090000Z confirmed 2026-11-03T11:00:00Z",
			"standup_20261105T090000Z confirmed 2026-11-05T09:00:00Z",
		}},
		{"showDeleted", url.Values{"showDeleted": {"true"}}, []string{
			"standup_20261102T090000Z confirmed 2026-11-02T09:00:00Z", "standup_20261103T090000Z confirmed 2026-11-03T11:00:00Z",
			"standup_20261104T090000Z cancelled 2026-11-04T09:00:00Z", "standup_20261105T090000Z confirmed 2026-11-05T09:00:00Z",
		}},
		{"window", url.Values{"timeMin": {"2026-11-02T09:15:00Z"}, "timeMax": {"2026-11-05T09:00:00Z"}}, []string{
			"standup_20261103T090000Z confirmed 2026-11-03T11:00:00Z",
		}},
		{"originalStart", url.Values{"originalStart": {"2026-11-03T09:00:00Z"}}, []string{
			"standup_20261103T090000Z confirmed 2026-11-03T11:00:00Z",
		}},
	}
	for _, tt := range tests {
		code, page, eb := listInstances(t, s, cal, "standup", tt.q)
		if got := idStatus(page.Items); code != http.StatusOK || !slices.Equal(got, tt.want) {
			t.Errorf("instances(%s) = %d %q %+v, want 200 %q", tt.name, code, got, eb, tt.want)
		}
	}

	s.SetPageSize(2)
	code, page, _ := listInstances(t, s, cal, "standup", nil)
	if code != http.StatusOK || len(page.Items) != 2 || page.NextPageToken == "" {
		t.Fatalf("instances, pages of 2 = %d %d items, next %q; want 2 and a next page", code, len(page.Items), page.NextPageToken)
	}
	code, page, _ = listInstances(t, s, cal, "standup", url.Values{"pageToken": {page.NextPageToken}})
	if code != http.StatusOK || len(page.Items) != 1 || page.NextPageToken != "" || page.NextSyncToken != "" {
		t.Errorf("instances, second page = %d %d items, next %q sync %q; want the last one, no tokens", code, len(page.Items), page.NextPageToken, page.NextSyncToken)
	}
	s.SetPageSize(0)

	// A deleted series keeps its instances, cancelled; a purged one is
	// gone.
	if err := s.Delete(cal, "standup"); err != nil {
		t.Fatal(err)
	}
	if code, page, eb := listInstances(t, s, cal, "standup", nil); code != http.StatusOK || len(page.Items) != 0 {
		t.Errorf("instances of a deleted series = %d %q %+v, want 200 and none", code, idStatus(page.Items), eb)
	}
	if _, page, _ := listInstances(t, s, cal, "standup", url.Values{"showDeleted": {"true"}}); len(page.Items) != 4 || page.Items[0].Status != "cancelled" {
		t.Errorf("instances of a deleted series, showDeleted = %q, want 4 cancelled", idStatus(page.Items))
	}
	if err := s.Purge(cal, "standup"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"standup", "nothing"} {
		if code, _, eb := listInstances(t, s, cal, id, nil); code != http.StatusNotFound || eb.Error.Errors[0].Reason != "notFound" {
			t.Errorf("instances(%s) = %d %+v, want 404 notFound", id, code, eb)
		}
	}
	if code, _, _ := listInstances(t, s, cal, "single", nil); code != http.StatusBadRequest {
		t.Errorf("instances(single event) = %d, want 400", code)
	}
	if n := s.RequestsTo(MethodInstances); n != 11 {
		t.Errorf("RequestsTo(%s) = %d, want 11", MethodInstances, n)
	}
	s.QueueInstancesFaults(cal, RateLimited)
	if code, _, _ := listInstances(t, s, cal, "nothing", nil); code != http.StatusTooManyRequests {
		t.Errorf("instances after QueueInstancesFaults(RateLimited) = %d, want 429", code)
	}
}

// TestEndlessSeriesExpandsLikeGoogle lists a weekly series without an
// end: 730 instances, some 14 years of them, as reports of the real
// service have it (see maxInstances), where a list with timeMax stops
// there.
func TestEndlessSeriesExpandsLikeGoogle(t *testing.T) {
	const cal = "a@example.com"
	s := NewServer()
	defer s.Close()
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	ev := NewEvent("weekly", "Weekly", start, start.Add(30*time.Minute))
	ev.Recurrence = []string{"RRULE:FREQ=WEEKLY"}
	if err := s.Put(cal, ev); err != nil {
		t.Fatal(err)
	}
	s.SetPageSize(0)
	got, _ := syncAll(t, s, cal, url.Values{"singleEvents": {"true"}, "maxResults": {"2500"}})
	if len(got) != 730 || got[729] != "weekly_20401022T090000Z confirmed" {
		t.Errorf("list(singleEvents) of a weekly series without an end = %d instances, the last %q; want 730, the last on 2040-10-22",
			len(got), got[len(got)-1])
	}
	_, page, _ := get(t, s, cal, url.Values{"singleEvents": {"true"}, "timeMax": {"2026-12-01T00:00:00Z"}})
	if len(page.Items) != 5 {
		t.Errorf("list(singleEvents, timeMax a month on) = %d instances, want 5", len(page.Items))
	}
}

// TestSeriesDeltas deletes a daily series and edits another's rule, and
// reads the incremental sync in each mode: every instance (the default),
// the master alone, or instances up to a horizon.
func TestSeriesDeltas(t *testing.T) {
	const cal = "a@example.com"
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		mode    SeriesDeltas
		horizon time.Duration
		want    []string
	}{
		{"every instance", DeltaEveryInstance, 0, []string{
			"single confirmed", "daily_20261130T090000Z cancelled", "daily_20261201T090000Z cancelled",
			"daily_20261202T090000Z cancelled", "daily_20261203T090000Z cancelled",
		}},
		{"master only", DeltaMasterOnly, 0, []string{"single confirmed", "daily cancelled"}},
		{"horizon of two days", DeltaEveryInstance, 48 * time.Hour, []string{
			"single confirmed", "daily_20261130T090000Z cancelled", "daily_20261201T090000Z cancelled",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer()
			defer s.Close()
			s.SetClock(func() time.Time { return now })
			ev := NewEvent("daily", "Daily", now.Add(9*time.Hour), now.Add(9*time.Hour+15*time.Minute))
			ev.Recurrence = []string{"RRULE:FREQ=DAILY;COUNT=4"}
			for _, e := range []*calendar.Event{ev, NewEvent("single", "Single", now.Add(10*time.Hour), now.Add(11*time.Hour))} {
				if err := s.Put(cal, e); err != nil {
					t.Fatal(err)
				}
			}
			_, token := syncAll(t, s, cal, url.Values{"singleEvents": {"true"}})
			s.SetSeriesDeltas(tt.mode)
			s.SetDeltaHorizon(tt.horizon)
			if err := s.Delete(cal, "daily"); err != nil {
				t.Fatal(err)
			}
			if err := s.Put(cal, NewEvent("single", "Renamed", now.Add(10*time.Hour), now.Add(11*time.Hour))); err != nil {
				t.Fatal(err)
			}
			if got, _ := syncAll(t, s, cal, incremental(token)); !slices.Equal(got, tt.want) {
				t.Errorf("incremental sync = %q, want %q", got, tt.want)
			}
		})
	}

	// In the master-only mode, a rule change lists the master as it is
	// now, with its recurrence, and none of its instances.
	s := NewServer()
	defer s.Close()
	ev := NewEvent("daily", "Daily", now.Add(9*time.Hour), now.Add(9*time.Hour+15*time.Minute))
	ev.Recurrence = []string{"RRULE:FREQ=DAILY;COUNT=4"}
	if err := s.Put(cal, ev); err != nil {
		t.Fatal(err)
	}
	_, token := syncAll(t, s, cal, url.Values{"singleEvents": {"true"}})
	s.SetSeriesDeltas(DeltaMasterOnly)
	ev.Recurrence = []string{"RRULE:FREQ=DAILY;COUNT=2"}
	if err := s.Put(cal, ev); err != nil {
		t.Fatal(err)
	}
	_, page, _ := get(t, s, cal, incremental(token))
	if len(page.Items) != 1 || page.Items[0].Id != "daily" || len(page.Items[0].Recurrence) != 1 {
		t.Errorf("incremental sync after a rule change, master only = %q, want the master with its recurrence", idStatus(page.Items))
	}
}
