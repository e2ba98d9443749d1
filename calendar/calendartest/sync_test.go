package calendartest

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/calendar/v3"
)

// syncAll lists calendarID with q and every page after, and returns the
// items as "id status" and the nextSyncToken of the last page.
func syncAll(t *testing.T, s *Server, calendarID string, q url.Values) ([]string, string) {
	t.Helper()
	var out []string
	q = cloneValues(q)
	for range 100 {
		code, page, eb := get(t, s, calendarID, q)
		if code != http.StatusOK {
			t.Fatalf("list(%v) = %d %+v", q, code, eb)
		}
		for _, ev := range page.Items {
			out = append(out, ev.Id+" "+ev.Status)
		}
		if page.NextPageToken == "" {
			if page.NextSyncToken == "" {
				t.Fatalf("list(%v): last page without nextSyncToken", q)
			}
			return out, page.NextSyncToken
		}
		q.Set("pageToken", page.NextPageToken)
	}
	t.Fatal("more than 100 pages")
	return nil, ""
}

func cloneValues(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = slices.Clone(v)
	}
	return out
}

func incremental(token string) url.Values {
	return url.Values{"singleEvents": {"true"}, "syncToken": {token}}
}

var syncDay = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

func TestSyncTokenReturnsChangesSince(t *testing.T) {
	s := NewServer()
	defer s.Close()
	const cal = "a@example.com"
	for _, id := range []string{"keep", "move", "drop"} {
		if err := s.Put(cal, NewEvent(id, id, syncDay.Add(9*time.Hour), syncDay.Add(10*time.Hour))); err != nil {
			t.Fatal(err)
		}
	}
	full, t1 := syncAll(t, s, cal, url.Values{"singleEvents": {"true"}, "timeMin": {"2026-11-30T00:00:00Z"}})
	if want := []string{"keep confirmed", "move confirmed", "drop confirmed"}; !slices.Equal(full, want) {
		t.Fatalf("full sync = %q, want %q", full, want)
	}

	// Nothing changed: nothing listed, and the same state's token.
	got, same := syncAll(t, s, cal, incremental(t1))
	if len(got) != 0 || same != t1 {
		t.Errorf("incremental sync with nothing changed = %q, token %q; want nothing, token %q", got, same, t1)
	}

	if err := s.Put(cal, NewEvent("move", "move", syncDay.Add(11*time.Hour), syncDay.Add(12*time.Hour))); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(cal, "drop"); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(cal, NewEvent("new", "new", syncDay.Add(13*time.Hour), syncDay.Add(14*time.Hour))); err != nil {
		t.Fatal(err)
	}
	got, t2 := syncAll(t, s, cal, incremental(t1))
	if want := []string{"move confirmed", "drop cancelled", "new confirmed"}; !slices.Equal(got, want) {
		t.Errorf("incremental sync = %q, want %q", got, want)
	}
	if t2 == t1 {
		t.Errorf("incremental sync after changes gave back token %q", t1)
	}
	// The old token still names the old state.
	if again, _ := syncAll(t, s, cal, incremental(t1)); !slices.Equal(again, got) {
		t.Errorf("incremental sync with the old token again = %q, want %q", again, got)
	}
	if got, _ := syncAll(t, s, cal, incremental(t2)); len(got) != 0 {
		t.Errorf("incremental sync with the new token = %q, want nothing", got)
	}
}

func TestSyncTokenSeries(t *testing.T) {
	const cal = "a@example.com"
	tests := []struct {
		name   string
		change func(s *Server) error
		want   []string
	}{
		{
			name:   "one instance cancelled",
			change: func(s *Server) error { return s.Delete(cal, "daily_20261202T090000Z") },
			want:   []string{"daily_20261202T090000Z cancelled"},
		},
		{
			name:   "series deleted",
			change: func(s *Server) error { return s.Delete(cal, "daily") },
			want: []string{
				"daily_20261130T090000Z cancelled", "daily_20261201T090000Z cancelled", "daily_20261202T090000Z cancelled",
				"daily_20261203T090000Z cancelled",
			},
		},
		{
			name: "this and following moved to 10:00",
			change: func(s *Server) error {
				_, err := s.SplitFollowing(cal, "daily_20261202T090000Z", func(ev *calendar.Event) {
					ev.Start.DateTime, ev.End.DateTime = "2026-12-02T10:00:00Z", "2026-12-02T10:15:00Z"
				})
				return err
			},
			want: []string{
				"daily_R20261202T090000_20261202T100000Z confirmed", "daily_R20261202T090000_20261203T100000Z confirmed",
				"daily_20261202T090000Z cancelled", "daily_20261203T090000Z cancelled",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer()
			defer s.Close()
			ev := NewEvent("daily", "Daily", syncDay.Add(9*time.Hour), syncDay.Add(9*time.Hour+15*time.Minute))
			ev.Recurrence = []string{"RRULE:FREQ=DAILY;COUNT=4"}
			if err := s.Put(cal, ev); err != nil {
				t.Fatal(err)
			}
			full, token := syncAll(t, s, cal, url.Values{"singleEvents": {"true"}})
			if len(full) != 4 {
				t.Fatalf("full sync = %q, want 4 instances", full)
			}
			if err := tt.change(s); err != nil {
				t.Fatal(err)
			}
			got, _ := syncAll(t, s, cal, incremental(token))
			if !slices.Equal(got, tt.want) {
				t.Errorf("incremental sync = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSyncTokenRefusesRestrictions(t *testing.T) {
	s := NewServer()
	defer s.Close()
	const cal = "a@example.com"
	s.AddCalendar(cal)
	_, token := syncAll(t, s, cal, nil)
	for _, p := range []struct{ name, value string }{
		{"timeMin", "2026-11-30T00:00:00Z"}, {"timeMax", "2026-12-30T00:00:00Z"}, {"orderBy", "startTime"},
		{"updatedMin", "2026-11-30T00:00:00Z"}, {"q", "standup"}, {"iCalUID", "x@google.com"},
		{"privateExtendedProperty", "a=b"}, {"sharedExtendedProperty", "a=b"}, {"showDeleted", "false"},
	} {
		q := incremental(token)
		q.Set(p.name, p.value)
		code, _, eb := get(t, s, cal, q)
		if code != http.StatusBadRequest || eb.Error.Message != SyncRestrictionsMessage {
			t.Errorf("list(syncToken, %s=%s) = %d %q, want 400 %q", p.name, p.value, code, eb.Error.Message, SyncRestrictionsMessage)
		}
	}
	if err := s.CheckRequests(); err == nil || strings.Count(err.Error(), "\n") != 8 {
		t.Errorf("CheckRequests() = %v, want the 9 requests the discovery document refuses", err)
	}
	q := incremental(token)
	q.Set("showDeleted", "true")
	if code, _, eb := get(t, s, cal, q); code != http.StatusOK {
		t.Errorf("list(syncToken, showDeleted=true) = %d %+v, want 200", code, eb)
	}
}

// TestSyncTokenShowDeletedReturnsEveryDeletion follows a report against
// the real API (googleapis/google-api-ruby-client#860): with singleEvents
// and a syncToken, asking for showDeleted=true returns every entry ever
// deleted on each sync, where leaving it out returns those deleted since.
func TestSyncTokenShowDeletedReturnsEveryDeletion(t *testing.T) {
	s := NewServer()
	defer s.Close()
	const cal = "a@example.com"
	for _, id := range []string{"old", "keep"} {
		if err := s.Put(cal, NewEvent(id, id, syncDay.Add(9*time.Hour), syncDay.Add(10*time.Hour))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete(cal, "old"); err != nil {
		t.Fatal(err)
	}
	_, token := syncAll(t, s, cal, url.Values{"singleEvents": {"true"}})
	if err := s.Put(cal, NewEvent("keep", "kept", syncDay.Add(9*time.Hour), syncDay.Add(10*time.Hour))); err != nil {
		t.Fatal(err)
	}
	if got, _ := syncAll(t, s, cal, incremental(token)); !slices.Equal(got, []string{"keep confirmed"}) {
		t.Errorf("incremental sync = %q, want [keep confirmed]", got)
	}
	q := incremental(token)
	q.Set("showDeleted", "true")
	got, next := syncAll(t, s, cal, q)
	if want := []string{"old cancelled", "keep confirmed"}; !slices.Equal(got, want) {
		t.Errorf("incremental sync with showDeleted=true = %q, want %q", got, want)
	}
	q.Set("syncToken", next)
	if got, _ := syncAll(t, s, cal, q); !slices.Equal(got, []string{"old cancelled"}) {
		t.Errorf("incremental sync with showDeleted=true and nothing changed = %q, want [old cancelled]", got)
	}
}

func TestSyncTokenGone(t *testing.T) {
	s := NewServer()
	defer s.Close()
	const cal = "a@example.com"
	if err := s.Put(cal, NewEvent("a", "a", syncDay, syncDay.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	_, token := syncAll(t, s, cal, nil)
	s.ExpireSyncTokens(cal)
	for name, tok := range map[string]string{"expired": token, "never issued": "bm90IGEgdG9rZW4"} {
		code, _, eb := get(t, s, cal, incremental(tok))
		if code != http.StatusGone || eb.Error.Errors[0].Reason != "fullSyncRequired" {
			t.Errorf("list(%s syncToken) = %d %+v, want 410 fullSyncRequired", name, code, eb)
		}
	}
	full, fresh := syncAll(t, s, cal, url.Values{"singleEvents": {"true"}})
	if !slices.Equal(full, []string{"a confirmed"}) || fresh == token {
		t.Errorf("full sync after 410 = %q, token %q; want [a confirmed] and a new token", full, fresh)
	}
	if got, _ := syncAll(t, s, cal, incremental(fresh)); len(got) != 0 {
		t.Errorf("incremental sync with the new token = %q, want nothing", got)
	}
}

// TestSyncPagesShowOneState changes the calendar between two pages of a
// full sync: the pages still show the state the first saw, and the token
// of the last page names that state, so the change comes with the next
// incremental sync rather than being lost.
func TestSyncPagesShowOneState(t *testing.T) {
	s := NewServer()
	defer s.Close()
	const cal = "a@example.com"
	for _, id := range []string{"a", "b", "c"} {
		if err := s.Put(cal, NewEvent(id, id, syncDay, syncDay.Add(time.Hour))); err != nil {
			t.Fatal(err)
		}
	}
	s.SetPageSize(2)
	q := url.Values{"singleEvents": {"true"}}
	_, first, _ := get(t, s, cal, q)
	if err := s.Delete(cal, "c"); err != nil {
		t.Fatal(err)
	}
	q.Set("pageToken", first.NextPageToken)
	code, last, eb := get(t, s, cal, q)
	if code != http.StatusOK || len(last.Items) != 1 || last.Items[0].Id != "c" || last.Items[0].Status != "confirmed" {
		t.Fatalf("second page after a change = %d %+v %+v, want c confirmed", code, last.Items, eb)
	}
	got, _ := syncAll(t, s, cal, incremental(last.NextSyncToken))
	if !slices.Equal(got, []string{"c cancelled"}) {
		t.Errorf("incremental sync = %q, want [c cancelled]", got)
	}
}
