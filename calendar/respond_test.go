package calendar_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"golang.org/x/oauth2"
	gcal "google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

// invite puts Bob's meeting id on Alice's calendar, Alice and Carol
// invited, and Bob's copy on his.
func invite(t *testing.T, srv *calendartest.Server, id string, start time.Time) {
	t.Helper()
	for _, owner := range []string{"bob@example.com", "alice@example.com"} {
		ev := calendartest.NewEvent(id, "Planning", start, start.Add(30*time.Minute))
		ev.Organizer = &gcal.EventOrganizer{Email: "bob@example.com", DisplayName: "Bob", Self: owner == "bob@example.com"}
		ev.Attendees = []*gcal.EventAttendee{
			{Email: "bob@example.com", Organizer: true, ResponseStatus: "accepted", Self: owner == "bob@example.com"},
			{Email: "alice@example.com", ResponseStatus: "needsAction", Self: owner == "alice@example.com"},
			{Email: "carol@example.com", ResponseStatus: "tentative"},
		}
		if err := srv.Put(owner, ev); err != nil {
			t.Fatal(err)
		}
	}
}

// answering returns a Source that reads and writes Alice's calendar with
// a grant of scopes.
func answering(t *testing.T, srv *calendartest.Server, scopes ...string) *calendar.Source {
	t.Helper()
	tok := srv.Grant("alice@example.com", scopes...)
	acc := &fakeAccounts{sources: map[string]oauth2.TokenSource{"alice@example.com": oauth2.StaticTokenSource(tok)}}
	src, _ := newSource(t, srv, func(c *calendar.Config) { c.Accounts = acc })
	return src
}

// A listed meeting says the owner's answer when they are an invited guest,
// and nothing when they organise it.
func TestMeetingsCarryTheOwnersAnswer(t *testing.T) {
	srv := newServer(t)
	start := time.Now().Add(time.Hour).Truncate(time.Minute)
	invite(t, srv, "plan1", start)
	src := answering(t, srv, gcal.CalendarEventsReadonlyScope)
	for cal, want := range map[string]meetingbot.Response{"alice@example.com": meetingbot.ResponseNeedsAction, "bob@example.com": meetingbot.ResponseNone} {
		ms, err := src.Meetings(t.Context(), sub(cal), time.Now(), start.Add(time.Hour))
		if err != nil || len(ms) != 1 {
			t.Fatalf("Meetings(%s) = %v, %v", cal, ids(ms), err)
		}
		if ms[0].Response != want {
			t.Errorf("Meetings(%s)[0].Response = %q, want %q", cal, ms[0].Response, want)
		}
	}
}

// An answer writes the person's own entry and nothing else, with the
// event's etag and sendUpdates=all; a second time, nothing.
func TestRespondWritesOnlyOwnAnswer(t *testing.T) {
	srv := newServer(t)
	start := time.Now().Add(time.Hour).Truncate(time.Minute)
	invite(t, srv, "plan1", start)
	src := answering(t, srv, gcal.CalendarEventsReadonlyScope, meetingbot.ScopeCalendarEvents)
	got, err := src.Respond(t.Context(), asOwner("alice@example.com"), "plan1", meetingbot.ResponseAccepted)
	if err != nil {
		t.Fatalf("Respond: %v", err)
	}
	if got.Was != meetingbot.ResponseNeedsAction || got.Response != meetingbot.ResponseAccepted || got.Title != "Planning" || !got.Start.Equal(start) {
		t.Errorf("Respond = %+v, want Planning at %v, needsAction -> accepted", got, start)
	}
	writes := srv.Writes()
	if len(writes) != 1 || writes[0].SendUpdates != "all" || writes[0].IfMatch == "" ||
		!slices.Equal(writes[0].Changes, []string{"attendees[alice@example.com].responseStatus: needsAction -> accepted"}) {
		t.Fatalf("Writes() = %+v, want one If-Match write with sendUpdates all changing Alice's answer alone", writes)
	}
	if _, err := src.Respond(t.Context(), asOwner("alice@example.com"), "plan1", meetingbot.ResponseAccepted); err != nil || len(srv.Writes()) != 1 {
		t.Errorf("Respond again: %v, %d writes; want nothing written", err, len(srv.Writes()))
	}
	ms, _ := src.Meetings(t.Context(), sub("alice@example.com"), time.Now(), start.Add(time.Hour))
	if len(ms) != 1 || ms[0].Response != meetingbot.ResponseAccepted {
		t.Errorf("after the answer the meeting reads %v", ms)
	}
	if _, err := src.Respond(t.Context(), asOwner("alice@example.com"), "plan1", meetingbot.ResponseDeclined); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Meeting(t.Context(), sub("alice@example.com"), "plan1"); !errors.Is(err, meetingbot.ErrDeclined) || !errors.Is(err, meetingbot.ErrGone) {
		t.Errorf("Meeting after declining: %v, want ErrDeclined (an ErrGone)", err)
	}
}

// Someone else's change between the read and the write (412) makes the
// answer read again and write on the new version, keeping that change.
func TestRespondRetriesOnPreconditionFailed(t *testing.T) {
	srv := newServer(t)
	start := time.Now().Add(time.Hour).Truncate(time.Minute)
	invite(t, srv, "plan1", start)
	src := answering(t, srv, meetingbot.ScopeCalendarEvents)
	srv.Interleave("alice@example.com", "plan1", func(ev *gcal.Event) { ev.Attendees[2].ResponseStatus = "accepted" })
	if _, err := src.Respond(t.Context(), asOwner("alice@example.com"), "plan1", meetingbot.ResponseTentative); err != nil {
		t.Fatalf("Respond: %v", err)
	}
	if n := srv.RequestsTo(calendartest.MethodPatch); n != 2 {
		t.Errorf("%d events.patch requests, want 2 (a 412, then the write)", n)
	}
	ms, _ := src.Meetings(t.Context(), sub("alice@example.com"), time.Now(), start.Add(time.Hour))
	if len(ms) != 1 || ms[0].Response != meetingbot.ResponseTentative {
		t.Fatalf("after the answer: %v", ms)
	}
	writes := srv.Writes()
	if len(writes) != 1 || !slices.Equal(writes[0].Changes, []string{"attendees[alice@example.com].responseStatus: needsAction -> tentative"}) {
		t.Errorf("Writes() = %+v, want Alice's answer alone, Carol's change kept", writes)
	}
}

// Each refusal is the error that says what to do.
func TestRespondErrors(t *testing.T) {
	srv := newServer(t)
	start := time.Now().Add(time.Hour).Truncate(time.Minute)
	invite(t, srv, "plan1", start)
	own := calendartest.NewEvent("mine", "Mine", start, start.Add(time.Hour))
	own.Organizer = &gcal.EventOrganizer{Email: "alice@example.com", Self: true}
	if err := srv.Put("alice@example.com", own); err != nil {
		t.Fatal(err)
	}
	if err := srv.Put("alice@example.com", calendartest.NewEvent("gone", "Gone", start, start.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if err := srv.Delete("alice@example.com", "gone"); err != nil {
		t.Fatal(err)
	}
	readOnly := answering(t, srv, gcal.CalendarEventsReadonlyScope)
	writer := answering(t, srv, meetingbot.ScopeCalendarEvents)
	nobody, _ := newSource(t, srv, func(c *calendar.Config) { c.Accounts = &fakeAccounts{} })
	cases := []struct {
		name  string
		src   *calendar.Source
		event string
		want  error
	}{
		{"a read-only grant", readOnly, "plan1", meetingbot.ErrNeedsWrite},
		{"no connection", nobody, "plan1", meetingbot.ErrNotConnected},
		{"a meeting she organises", writer, "mine", meetingbot.ErrNotInvited},
		{"a cancelled event", writer, "gone", meetingbot.ErrGone},
		{"a deleted event", writer, "never", meetingbot.ErrGone},
	}
	for _, c := range cases {
		_, err := c.src.Respond(t.Context(), asOwner("alice@example.com"), c.event, meetingbot.ResponseAccepted)
		if !errors.Is(err, c.want) || !meetingbot.IsPermanent(err) {
			t.Errorf("Respond with %s: %v, want permanent %v", c.name, err, c.want)
		}
	}
	// Carol's copy, shared with Alice, read and written with Alice's
	// token: Google lets her read it only.
	ev := calendartest.NewEvent("plan1", "Planning", start, start.Add(30*time.Minute))
	ev.Organizer = &gcal.EventOrganizer{Email: "bob@example.com"}
	ev.Attendees = []*gcal.EventAttendee{{Email: "bob@example.com", Organizer: true}, {Email: "carol@example.com", Self: true, ResponseStatus: "needsAction"}}
	if err := srv.Put("carol@example.com", ev); err != nil {
		t.Fatal(err)
	}
	srv.Share("carol@example.com", "alice@example.com")
	tok := srv.Grant("alice@example.com", meetingbot.ScopeCalendarEvents)
	both := &fakeAccounts{sources: map[string]oauth2.TokenSource{"carol@example.com": oauth2.StaticTokenSource(tok)}}
	shared, _ := newSource(t, srv, func(c *calendar.Config) { c.Accounts = both })
	if _, err := shared.Respond(context.Background(), asOwner("carol@example.com"), "plan1", meetingbot.ResponseAccepted); !errors.Is(err, meetingbot.ErrCannotEdit) || !meetingbot.IsPermanent(err) {
		t.Errorf("Respond on a calendar shared read-only: %v, want ErrCannotEdit", err)
	}
	if n := len(srv.Writes()); n != 0 {
		t.Errorf("%d writes, want 0", n)
	}
}
