package calendar_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

// accounts is Accounts over people's grants obtained from the emulator.
type fakeAccounts struct {
	mu      sync.Mutex
	sources map[string]oauth2.TokenSource // by calendar ID
	refused []string
}

func (a *fakeAccounts) Account(_ context.Context, user, calendarID string) (oauth2.TokenSource, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ts := a.sources[calendarID]
	if ts == nil || user != owner(calendarID) {
		return nil, "", meetingbot.ErrNotConnected
	}
	return ts, "conn:" + calendarID, nil
}

func (a *fakeAccounts) Renew(string) {} // the token sources are the library's: they refresh once expired

func (a *fakeAccounts) Refused(_ context.Context, connection string, _ error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refused = append(a.refused, connection)
}

// owner is the Slack user whose connected account calendarID is, in
// fakeAccounts.
func owner(calendarID string) string { return "U-" + calendarID }

// asOwner is calendarID as its owner reads it with their own account.
func asOwner(calendarID string) string { return meetingbot.ReadAs(calendarID, owner(calendarID)) }

// grant runs the web-server flow for account and returns its token
// source.
func grant(t *testing.T, srv *calendartest.Server, account string) oauth2.TokenSource {
	t.Helper()
	const redirect = "https://bot.example.com/google/oauth/callback"
	srv.OAuthClientJSON(redirect)
	cfg := &oauth2.Config{
		ClientID: "123456789012-web.apps.googleusercontent.com", ClientSecret: "GOCSPX-test-web-client-secret", RedirectURL: redirect,
		Endpoint: oauth2.Endpoint{AuthURL: srv.AuthURL(), TokenURL: srv.TokenURL()},
		Scopes:   []string{"openid", "email", "https://www.googleapis.com/auth/calendar.events.readonly"},
	}
	verifier := oauth2.GenerateVerifier()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(cfg.AuthCodeURL("s", oauth2.AccessTypeOffline, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("login_hint", account)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, srv.Client())
	tok, err := cfg.Exchange(ctx, loc.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.TokenSource(ctx, tok)
}

// A connected person's calendar is read with their own token, though
// it is shared with nobody; another's, with the service account; without
// a service account, a calendar nobody connected says how to connect it.
func TestConnectedAccountsReadTheirOwnCalendar(t *testing.T) {
	srv := newServer(t)
	start := time.Now().Add(time.Hour).Truncate(time.Minute)
	put(t, srv, "alice@example.com", "a1", start, 30*time.Minute)
	put(t, srv, "bob@example.com", "b1", start, 30*time.Minute)
	srv.Share("alice@example.com", "nobody@example.com") // not the service account
	srv.Share("bob@example.com", srv.ServiceAccountEmail())
	acc := &fakeAccounts{sources: map[string]oauth2.TokenSource{"alice@example.com": grant(t, srv, "alice@example.com")}}

	src, _ := newSource(t, srv, func(c *calendar.Config) { c.Accounts = acc })
	for _, s := range []meetingbot.Subscription{mine("alice@example.com"), sub("bob@example.com")} {
		got, err := src.Meetings(t.Context(), s, time.Now(), start.Add(time.Hour))
		if err != nil || len(got) != 1 {
			t.Errorf("Meetings(%s) = %v, %v; want its one meeting", s.Reading(), ids(got), err)
		}
	}
	// A subscription someone else made of Alice's calendar is not hers to
	// read with: the service account reads it, which she did not share it
	// with.
	if got, err := src.Meetings(t.Context(), sub("alice@example.com"), time.Now(), start.Add(time.Hour)); err == nil {
		t.Errorf("Meetings(alice's calendar, subscribed by another) = %v, want it read as the service account, which cannot", ids(got))
	}

	// No service account: only connected calendars are read.
	alone, err := calendar.New(t.Context(), calendar.Config{Endpoint: srv.Endpoint(), HTTPClient: srv.Client(), Accounts: acc, Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatalf("New with Accounts and no credentials: %v", err)
	}
	if got, err := alone.Meetings(t.Context(), mine("alice@example.com"), time.Now(), start.Add(time.Hour)); err != nil || len(got) != 1 {
		t.Errorf("Meetings(alice) without a service account = %v, %v", ids(got), err)
	}
	_, err = alone.Meetings(t.Context(), sub("bob@example.com"), time.Now(), start.Add(time.Hour))
	if !meetingbot.IsPermanent(err) || !errors.Is(err, meetingbot.ErrNotConnected) || !strings.Contains(err.Error(), "/meetingbot connect") {
		t.Errorf("Meetings(bob) without a service account: %v, want a permanent error saying to connect", err)
	}
	if _, err := calendar.New(t.Context(), calendar.Config{Endpoint: srv.Endpoint()}); err == nil {
		t.Error("New with neither credentials nor Accounts: no error")
	}
}

// A token refused even after a refresh (401 twice) stops the connection.
func TestRefusedTokenStopsTheConnection(t *testing.T) {
	srv := newServer(t)
	srv.AddCalendar("alice@example.com")
	acc := &fakeAccounts{sources: map[string]oauth2.TokenSource{"alice@example.com": grant(t, srv, "alice@example.com")}}
	src, _ := newSource(t, srv, func(c *calendar.Config) { c.Accounts = acc })
	srv.QueueFaults("alice@example.com", calendartest.Unauthorized, calendartest.Unauthorized)
	_, err := src.Meetings(t.Context(), mine("alice@example.com"), time.Now(), time.Now().Add(time.Hour))
	if !meetingbot.IsPermanent(err) {
		t.Errorf("Meetings after 401 twice: %v, want permanent", err)
	}
	if len(acc.refused) != 1 || acc.refused[0] != "conn:alice@example.com" {
		t.Errorf("Refused calls = %v, want one for alice's connection", acc.refused)
	}
}
