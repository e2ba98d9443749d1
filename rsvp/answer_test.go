package rsvp_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
	gcal "google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/rsvp"
)

// people are the connections of the test: who connected which account
// with which scopes, each with its grant at the emulator. They serve
// the calendar source (Account, by calendar) and the answers
// (Connection, LinkScopes, by person).
type fakeAccounts struct {
	mu     sync.Mutex
	srv    *calendartest.Server
	conns  map[string]meetingbot.Connection // by Slack user
	tokens map[string]oauth2.TokenSource    // by account
	links  [][]string                       // the scopes each link asked for
}

func newPeople(srv *calendartest.Server) *fakeAccounts {
	return &fakeAccounts{srv: srv, conns: map[string]meetingbot.Connection{}, tokens: map[string]oauth2.TokenSource{}}
}

// connect records user's connection of account, granted scopes.
func (p *fakeAccounts) connect(user, account string, state meetingbot.ConnectionState, scopes ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns[user] = meetingbot.Connection{Provider: meetingbot.ProviderGoogle, UserID: user, Account: account, Scopes: scopes, State: state}
	p.tokens[account] = oauth2.StaticTokenSource(p.srv.Grant(account, scopes...))
}

func (p *fakeAccounts) Account(_ context.Context, _, calendarID string) (oauth2.TokenSource, string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ts := p.tokens[strings.ToLower(calendarID)]
	if ts == nil {
		return nil, "", meetingbot.ErrNotConnected
	}
	return ts, "conn:" + calendarID, nil
}

func (p *fakeAccounts) Refused(context.Context, string, error) {}

func (p *fakeAccounts) Renew(string) {}

func (p *fakeAccounts) Connection(_ context.Context, _ meetingbot.Provider, user string) (meetingbot.Connection, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.conns[user]
	return c, ok, nil
}

func (p *fakeAccounts) LinkScopes(_ context.Context, _ meetingbot.Provider, user string, scopes []string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.links = append(p.links, scopes)
	return "https://bot.example.com/google/oauth/start?t=" + user, nil
}

// refused is a token source whose grant Google no longer honours, as
// package connect's answers after invalid_grant.
type refused struct{}

func (refused) Token() (*oauth2.Token, error) {
	return nil, meetingbot.Permanent(fmt.Errorf("connect: Google refused the grant: %w: invalid_grant", meetingbot.ErrNotConnected))
}

// revokedNow is a token source whose refresh Google refuses now: the
// connection stops (as package connect stops it on invalid_grant), and
// the error on its way back names only the token endpoint's answer.
type revokedNow struct {
	p    *fakeAccounts
	user string
}

func (r revokedNow) Token() (*oauth2.Token, error) {
	r.p.mu.Lock()
	c := r.p.conns[r.user]
	c.State = meetingbot.ConnectionBroken
	r.p.conns[r.user] = c
	r.p.mu.Unlock()
	return nil, &oauth2.RetrieveError{ErrorCode: "invalid_grant"}
}

// world is Bob's meeting on his and Alice's calendars, Alice and Carol
// invited, read and written through the real calendar client.
type world struct {
	srv          *calendartest.Server
	fakeAccounts *fakeAccounts
	svc          *rsvp.Service
	synced       []string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	srv := calendartest.NewServer()
	t.Cleanup(srv.Close)
	start := time.Now().Add(time.Hour).Truncate(time.Minute)
	for _, owner := range []string{"bob@example.com", "alice@example.com"} {
		ev := calendartest.NewEvent("plan1", "Planning", start, start.Add(30*time.Minute))
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
	key := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(key, srv.ServiceAccountJSON(), 0o600); err != nil {
		t.Fatal(err)
	}
	w := &world{srv: srv, fakeAccounts: newPeople(srv)}
	src, err := calendar.New(t.Context(), calendar.Config{CredentialsFile: key, Endpoint: srv.Endpoint(), HTTPClient: srv.Client(), Accounts: w.fakeAccounts,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	w.svc, err = rsvp.NewService(src, w.fakeAccounts, func(_ context.Context, cal string) {
		mu.Lock()
		defer mu.Unlock()
		w.synced = append(w.synced, cal)
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestAnswerWritesTheClickersOwnAnswer: Alice's click writes her own
// answer on her own calendar and nothing else; a button naming her
// calendar in another case is hers too; Refresh reads that calendar.
func TestAnswerWritesTheClickersOwnAnswer(t *testing.T) {
	w := newWorld(t)
	w.fakeAccounts.connect("UALICE", "alice@example.com", meetingbot.ConnectionActive, gcal.CalendarEventsReadonlyScope, meetingbot.ScopeCalendarEvents)
	got, err := w.svc.Answer(t.Context(), "UALICE", "Alice@Example.com", "plan1", meetingbot.ResponseDeclined)
	if err != nil {
		t.Fatalf("Answer = %v", err)
	}
	if got.Was != meetingbot.ResponseNeedsAction || got.Response != meetingbot.ResponseDeclined || got.Title != "Planning" || got.Calendar != "Alice@Example.com" {
		t.Errorf("Answer = %+v, want Planning on Alice's calendar, needsAction -> declined", got)
	}
	writes := w.srv.Writes()
	if len(writes) != 1 || writes[0].By != "alice@example.com" ||
		!slices.Equal(writes[0].Changes, []string{"attendees[alice@example.com].responseStatus: needsAction -> declined"}) {
		t.Errorf("Writes() = %+v, want Alice's own answer alone, written as her", writes)
	}
	w.svc.Refresh(t.Context(), got.Calendar)
	if !slices.Equal(w.synced, []string{"Alice@Example.com"}) {
		t.Errorf("calendars read again = %v, want Alice's", w.synced)
	}
}

// TestAnswerRefusals: nobody answers for another, a person without the
// grant answering needs is asked for it, and a person whose connection
// is missing or stopped is told so; none of them writes anything.
func TestAnswerRefusals(t *testing.T) {
	for _, tt := range []struct {
		name    string
		connect func(p *fakeAccounts)
		target  target
		want    error
	}{
		{"someone else's calendar", func(p *fakeAccounts) {
			p.connect("UALICE", "alice@example.com", meetingbot.ConnectionActive, meetingbot.ScopeCalendarEvents)
		}, target{calendar: "bob@example.com", event: "plan1"}, meetingbot.ErrNotYourCalendar},
		{"read-only grant", func(p *fakeAccounts) {
			p.connect("UALICE", "alice@example.com", meetingbot.ConnectionActive, gcal.CalendarEventsReadonlyScope)
		}, target{event: "plan1"}, meetingbot.ErrNeedsWrite},
		{"not connected", func(p *fakeAccounts) {}, target{event: "plan1"}, meetingbot.ErrNotConnected},
		{"connection stopped", func(p *fakeAccounts) {
			p.connect("UALICE", "alice@example.com", meetingbot.ConnectionBroken, meetingbot.ScopeCalendarEvents)
		}, target{event: "plan1"}, meetingbot.ErrConnectionBroken},
		{"grant refused meanwhile", func(p *fakeAccounts) {
			p.connect("UALICE", "alice@example.com", meetingbot.ConnectionActive, meetingbot.ScopeCalendarEvents)
			p.tokens["alice@example.com"] = refused{}
		}, target{event: "plan1"}, meetingbot.ErrConnectionBroken},
		{"grant refused, said by the token endpoint alone", func(p *fakeAccounts) {
			p.connect("UALICE", "alice@example.com", meetingbot.ConnectionActive, meetingbot.ScopeCalendarEvents)
			p.tokens["alice@example.com"] = revokedNow{p: p, user: "UALICE"}
		}, target{event: "plan1"}, meetingbot.ErrConnectionBroken},
		{"an event she organises", func(p *fakeAccounts) {
			p.connect("UBOB", "bob@example.com", meetingbot.ConnectionActive, meetingbot.ScopeCalendarEvents)
		}, target{event: "plan1"}, meetingbot.ErrNotInvited},
		{"a deleted event", func(p *fakeAccounts) {
			p.connect("UALICE", "alice@example.com", meetingbot.ConnectionActive, meetingbot.ScopeCalendarEvents)
		}, target{event: "gone1"}, meetingbot.ErrGone},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			tt.connect(w.fakeAccounts)
			user := "UALICE"
			if tt.name == "an event she organises" {
				user = "UBOB"
			}
			_, err := w.svc.Answer(t.Context(), user, tt.target.calendar, tt.target.event, meetingbot.ResponseAccepted)
			if !errors.Is(err, tt.want) || !meetingbot.IsPermanent(err) {
				t.Errorf("Answer = %v, want permanent %v", err, tt.want)
			}
			if n := len(w.srv.Writes()); n != 0 {
				t.Errorf("%d writes, want none", n)
			}
		})
	}
}

// TestConsentLinkAsksForTheEventsScope: the link asks for what answering
// needs and nothing more.
func TestConsentLinkAsksForTheEventsScope(t *testing.T) {
	w := newWorld(t)
	if _, err := w.svc.ConsentLink(t.Context(), "UALICE"); err != nil {
		t.Fatal(err)
	}
	if len(w.fakeAccounts.links) != 1 || !slices.Equal(w.fakeAccounts.links[0], []string{meetingbot.ScopeCalendarEvents}) {
		t.Errorf("links asked for scopes %v, want [%s]", w.fakeAccounts.links, meetingbot.ScopeCalendarEvents)
	}
}

// target is the invitation an answer control names: a calendar ("" for
// the clicker's own) and an event.
type target struct{ calendar, event string }
