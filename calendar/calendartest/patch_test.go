package calendartest_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

const (
	alice = "alice@example.com"
	bob   = "bob@example.com"
	carol = "carol@example.com"
)

// invitation puts the meeting Bob organises, with Alice and Carol
// invited, on Bob's calendar and on Alice's, each copy marking its own
// calendar's entry self, as Google does.
func invitation(t *testing.T, srv *calendartest.Server, id string) {
	t.Helper()
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for _, owner := range []string{bob, alice} {
		ev := calendartest.NewEvent(id, "Planning", start, start.Add(30*time.Minute))
		ev.Organizer = &calendar.EventOrganizer{Email: bob, DisplayName: "Bob", Self: owner == bob}
		ev.Attendees = []*calendar.EventAttendee{
			{Email: bob, Organizer: true, ResponseStatus: "accepted", Self: owner == bob},
			{Email: alice, ResponseStatus: "needsAction", Self: owner == alice},
			{Email: carol, ResponseStatus: "tentative", Comment: "may be late"},
		}
		if err := srv.Put(owner, ev); err != nil {
			t.Fatal(err)
		}
	}
}

// personal returns an API client acting for account with scopes.
func personal(t *testing.T, srv *calendartest.Server, account string, scopes ...string) *calendar.Service {
	t.Helper()
	tok := srv.Grant(account, scopes...)
	svc, err := calendar.NewService(context.Background(), option.WithEndpoint(srv.Endpoint()),
		option.WithTokenSource(oauth2.StaticTokenSource(tok)))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func status(t *testing.T, err error) int {
	t.Helper()
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) {
		t.Fatalf("error %v is not an API error", err)
	}
	return gerr.Code
}

func reason(err error) string {
	var gerr *googleapi.Error
	if errors.As(err, &gerr) && len(gerr.Errors) > 0 {
		return gerr.Errors[0].Reason
	}
	return ""
}

func answer(email, response string) *calendar.Event {
	return &calendar.Event{AttendeesOmitted: true, Attendees: []*calendar.EventAttendee{{Email: email, ResponseStatus: response}}}
}

// An answer with attendeesOmitted changes the person's own entry and
// nothing else, in their copy and in the organizer's; the etag changes;
// the write is recorded with its sendUpdates.
func TestPatchAnswerChangesOnlyOwnEntry(t *testing.T) {
	srv := calendartest.NewServer()
	defer srv.Close()
	invitation(t, srv, "plan1")
	svc := personal(t, srv, alice, calendar.CalendarEventsScope)
	before, err := svc.Events.Get(alice, "plan1").Do()
	if err != nil {
		t.Fatal(err)
	}
	call := svc.Events.Patch(alice, "plan1", answer(alice, "accepted")).SendUpdates("all")
	call.Header().Set("If-Match", before.Etag)
	after, err := call.Do()
	if err != nil {
		t.Fatalf("patch: %v", err)
	}
	if after.Etag == before.Etag || after.Etag == "" {
		t.Errorf("etag after the write = %q, want a new one (was %q)", after.Etag, before.Etag)
	}
	writes := srv.Writes()
	want := []string{"attendees[alice@example.com].responseStatus: needsAction -> accepted"}
	if len(writes) != 1 || !slices.Equal(writes[0].Changes, want) || writes[0].SendUpdates != "all" || writes[0].By != alice || writes[0].IfMatch != before.Etag {
		t.Fatalf("Writes() = %+v, want one by %s with sendUpdates all, If-Match %s, changing %v", writes, alice, before.Etag, want)
	}
	org := personal(t, srv, bob, calendar.CalendarEventsReadonlyScope)
	ev, err := org.Events.Get(bob, "plan1").Do()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range ev.Attendees {
		got[a.Email] = a.ResponseStatus + "/" + a.Comment
	}
	if got[alice] != "accepted/" || got[carol] != "tentative/may be late" || got[bob] != "accepted/" || len(got) != 3 {
		t.Errorf("the organizer's copy has %v, want Alice accepted and the others as they were", got)
	}
}

// If-Match with an etag no longer the event's is 412, and changes nothing.
func TestPatchStaleEtagIsPreconditionFailed(t *testing.T) {
	srv := calendartest.NewServer()
	defer srv.Close()
	invitation(t, srv, "plan1")
	svc := personal(t, srv, alice, calendar.CalendarEventsScope)
	read, err := svc.Events.Get(alice, "plan1").Do()
	if err != nil {
		t.Fatal(err)
	}
	// Another writer between the read and the write: Carol's answer.
	srv.Interleave(alice, "plan1", func(ev *calendar.Event) { ev.Attendees[2].ResponseStatus = "accepted" })
	call := svc.Events.Patch(alice, "plan1", answer(alice, "declined"))
	call.Header().Set("If-Match", read.Etag)
	_, err = call.Do()
	if err == nil || status(t, err) != http.StatusPreconditionFailed || reason(err) != "conditionNotMet" {
		t.Fatalf("patch with a stale etag: %v, want 412 conditionNotMet", err)
	}
	if n := len(srv.Writes()); n != 0 {
		t.Errorf("%d writes recorded after a 412, want 0", n)
	}
	again, err := svc.Events.Get(alice, "plan1").Do()
	if err != nil {
		t.Fatal(err)
	}
	call = svc.Events.Patch(alice, "plan1", answer(alice, "declined"))
	call.Header().Set("If-Match", again.Etag)
	if _, err := call.Do(); err != nil {
		t.Fatalf("patch with the fresh etag: %v", err)
	}
	final, _ := svc.Events.Get(alice, "plan1").Do()
	if final.Attendees[1].ResponseStatus != "declined" || final.Attendees[2].ResponseStatus != "accepted" {
		t.Errorf("attendees after the retry: Alice %s, Carol %s; want declined and Carol's own accepted kept",
			final.Attendees[1].ResponseStatus, final.Attendees[2].ResponseStatus)
	}
}

// A guest may not change another attendee nor a shared property; a list
// of attendees that keeps the others as they are and changes the guest's
// own answer is accepted.
func TestPatchPerAttendeeWrites(t *testing.T) {
	srv := calendartest.NewServer()
	defer srv.Close()
	invitation(t, srv, "plan1")
	svc := personal(t, srv, alice, calendar.CalendarEventsScope)
	cases := []struct {
		name   string
		change func(ev *calendar.Event) *calendar.Event
		want   int
	}{
		{"another attendee's answer", func(ev *calendar.Event) *calendar.Event {
			ev.Attendees[2].ResponseStatus = "declined"
			return &calendar.Event{Attendees: ev.Attendees}
		}, http.StatusForbidden},
		{"another attendee dropped", func(ev *calendar.Event) *calendar.Event {
			return &calendar.Event{Attendees: ev.Attendees[:2]}
		}, http.StatusForbidden},
		{"the title", func(*calendar.Event) *calendar.Event { return &calendar.Event{Summary: "Mine now"} }, http.StatusForbidden},
		{"another attendee through attendeesOmitted", func(*calendar.Event) *calendar.Event { return answer(carol, "declined") }, http.StatusForbidden},
		{"own answer in the whole list", func(ev *calendar.Event) *calendar.Event {
			ev.Attendees[1].ResponseStatus = "tentative"
			return &calendar.Event{Attendees: ev.Attendees}
		}, http.StatusOK},
	}
	for _, c := range cases {
		fresh, err := svc.Events.Get(alice, "plan1").Do()
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.Events.Patch(alice, "plan1", c.change(fresh)).Do()
		got := http.StatusOK
		if err != nil {
			got = status(t, err)
			if reason(err) != "forbiddenForNonOrganizer" {
				t.Errorf("%s: reason %q, want forbiddenForNonOrganizer", c.name, reason(err))
			}
		}
		if got != c.want {
			t.Errorf("patch of %s: HTTP %d, want %d", c.name, got, c.want)
		}
	}
	writes := srv.Writes()
	if len(writes) != 1 || !slices.Equal(writes[0].Changes, []string{"attendees[alice@example.com].responseStatus: needsAction -> tentative"}) {
		t.Errorf("Writes() = %+v, want only Alice's own answer", writes)
	}
}

// A read-only grant, another person's calendar shared with one, and an
// event that does not exist are refused as Google refuses them.
func TestPatchRefusals(t *testing.T) {
	srv := calendartest.NewServer()
	defer srv.Close()
	invitation(t, srv, "plan1")
	srv.Share(bob, bob, alice)
	cases := []struct {
		name     string
		svc      *calendar.Service
		calendar string
		event    string
		status   int
		reason   string
	}{
		{"a read-only grant", personal(t, srv, alice, calendar.CalendarEventsReadonlyScope), alice, "plan1", http.StatusForbidden, "insufficientPermissions"},
		{"a calendar shared read-only", personal(t, srv, alice, calendar.CalendarEventsScope), bob, "plan1", http.StatusForbidden, "requiredAccessLevel"},
		{"no such event", personal(t, srv, alice, calendar.CalendarEventsScope), alice, "nothing", http.StatusNotFound, "notFound"},
	}
	for _, c := range cases {
		_, err := c.svc.Events.Patch(c.calendar, c.event, answer(alice, "accepted")).Do()
		if err == nil || status(t, err) != c.status || reason(err) != c.reason {
			t.Errorf("patch with %s: %v, want HTTP %d %s", c.name, err, c.status, c.reason)
		}
	}
	if n := len(srv.Writes()); n != 0 {
		t.Errorf("%d writes recorded, want 0", n)
	}
}

// Answering one occurrence of a series makes it an exception; the others
// keep the series' answer. Answering the series answers them all.
func TestPatchOccurrenceAndSeries(t *testing.T) {
	srv := calendartest.NewServer()
	defer srv.Close()
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	ev := calendartest.NewEvent("weekly", "Weekly", start, start.Add(30*time.Minute))
	ev.Recurrence = []string{"RRULE:FREQ=WEEKLY;COUNT=3"}
	ev.Organizer = &calendar.EventOrganizer{Email: bob}
	ev.Attendees = []*calendar.EventAttendee{{Email: bob, Organizer: true, ResponseStatus: "accepted"}, {Email: alice, Self: true, ResponseStatus: "needsAction"}}
	if err := srv.Put(alice, ev); err != nil {
		t.Fatal(err)
	}
	svc := personal(t, srv, alice, calendar.CalendarEventsScope)
	if _, err := svc.Events.Patch(alice, "weekly_20261207T090000Z", answer(alice, "declined")).Do(); err != nil {
		t.Fatalf("patch of an occurrence: %v", err)
	}
	answers := func() []string {
		list, err := svc.Events.List(alice).SingleEvents(true).OrderBy("startTime").Do()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range list.Items {
			out = append(out, it.Id+"="+it.Attendees[1].ResponseStatus)
		}
		return out
	}
	want := []string{"weekly_20261130T090000Z=needsAction", "weekly_20261207T090000Z=declined", "weekly_20261214T090000Z=needsAction"}
	if got := answers(); !slices.Equal(got, want) {
		t.Errorf("after answering one occurrence: %v, want %v", got, want)
	}
	if _, err := svc.Events.Patch(alice, "weekly", answer(alice, "accepted")).Do(); err != nil {
		t.Fatalf("patch of the series: %v", err)
	}
	want = []string{"weekly_20261130T090000Z=accepted", "weekly_20261207T090000Z=declined", "weekly_20261214T090000Z=accepted"}
	if got := answers(); !slices.Equal(got, want) {
		t.Errorf("after answering the series: %v, want %v (the exception keeps its own)", got, want)
	}
}
