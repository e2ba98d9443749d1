package connect_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/connect"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// slackLink asks replica 0 for user's link to connect Slack.
func (r *rig) slackLink(user string) string {
	r.t.Helper()
	l, err := r.replica[0].Link(r.t.Context(), meetingbot.ProviderSlack, user)
	if err != nil {
		r.t.Fatal(err)
	}
	return l
}

// A person connects their Slack user with the same flow: the user token
// is kept sealed, its rotation honoured, and a revocation stops it.
func TestConnectSlack(t *testing.T) {
	r := newRig(t, 1)
	r.slack.SetTokenRotation(12 * time.Hour)
	r.slack.SignIn("U1")
	status, page := visit(t, r.browser(), r.slackLink("U1"))
	if status != http.StatusOK || !strings.Contains(page, "Connected your Slack user: you can close this tab.") {
		t.Fatalf("the Slack flow ended with %d:\n%s", status, page)
	}
	noSecrets(t, page, "xoxp-", "xoxe")
	c := <-r.connected
	if c.Provider != meetingbot.ProviderSlack || c.UserID != "U1" || c.Account != "U1" {
		t.Errorf("connected %s %s %s, want slack U1 U1", c.Provider, c.UserID, c.Account)
	}
	ctx := t.Context()
	ts, _, err := r.replica[0].UserToken(ctx, meetingbot.ProviderSlack, "U1")
	if err != nil {
		t.Fatal(err)
	}
	first, err := ts.Token()
	if err != nil || !strings.HasPrefix(first.AccessToken, "xoxe.xoxp-") {
		t.Fatalf("Token = %v, %v; want the rotating user token", first, err)
	}
	r.fakeClock.Advance(13 * time.Hour) // past its expiry: refreshed
	defer r.fakeClock.Advance(-13 * time.Hour)
	second, err := ts.Token()
	if err != nil || second.AccessToken == first.AccessToken {
		t.Fatalf("Token after expiry = %v, %v; want a refreshed token", second, err)
	}

	r.slack.RevokeUserTokens("U1")
	r.fakeClock.Advance(13 * time.Hour) // expired again: its refresh is refused
	defer r.fakeClock.Advance(-13 * time.Hour)
	third, err := ts.Token()
	if err == nil {
		t.Fatalf("Token after revocation = %v, want an error", third)
	}
	if !errors.Is(err, meetingbot.ErrNotConnected) {
		t.Errorf("Token after revocation: %v, want ErrNotConnected", err)
	}
	if b := <-r.broken; b.Provider != meetingbot.ProviderSlack || !strings.Contains(b.Reason, "Slack stopped accepting") {
		t.Errorf("Broken(%s, %q)", b.Provider, b.Reason)
	}
}

func TestConnectSlackRefusals(t *testing.T) {
	r := newRig(t, 1)
	r.slack.SignIn("U2")
	status, page := visit(t, r.browser(), r.slackLink("U1"))
	if status != http.StatusForbidden || !strings.Contains(page, "You signed in to Slack as another user") {
		t.Errorf("another user: %d\n%s", status, page)
	}
	if n := r.slack.UserTokens("U2"); n != 0 {
		t.Errorf("the other user's token is live (%d): it must be revoked", n)
	}
	r.slack.DenyAuthorization()
	status, page = visit(t, r.browser(), r.slackLink("U1"))
	if status != http.StatusForbidden || !strings.Contains(page, "You did not allow access to Slack") {
		t.Errorf("denied: %d\n%s", status, page)
	}
	if cs, _ := r.stores[0].Connections(t.Context()); len(cs) != 0 {
		t.Errorf("refused flows stored %d connections", len(cs))
	}

	// tokens_revoked and app_uninstalled delete without revoking.
	r.slack.SignIn("U1")
	if status, page := visit(t, r.browser(), r.slackLink("U1")); status != http.StatusOK {
		t.Fatalf("connect: %d %s", status, page)
	}
	<-r.connected
	if n, err := r.replica[0].ForgetAll(t.Context(), meetingbot.ProviderSlack); n != 1 || err != nil {
		t.Errorf("ForgetAll = %d, %v; want 1", n, err)
	}
	if _, _, err := r.replica[0].UserToken(t.Context(), meetingbot.ProviderSlack, "U1"); !errors.Is(err, meetingbot.ErrNotConnected) {
		t.Errorf("UserToken after ForgetAll: %v, want ErrNotConnected", err)
	}
}

// gate holds the requests of a replica's Slack provider until released,
// telling when one arrives.
type gate struct {
	arrived, release chan struct{}
}

func (g gate) RoundTrip(req *http.Request) (*http.Response, error) {
	g.arrived <- struct{}{}
	<-g.release
	return http.DefaultTransport.RoundTrip(req)
}

// refreshes counts the refresh_token grants Slack answered.
func refreshes(r *rig) int {
	n := 0
	for _, c := range r.slack.CallsTo("oauth.v2.access") {
		if c.Form.Get("grant_type") == "refresh_token" {
			n++
		}
	}
	return n
}

// With Slack's token rotation, a user token is reused until a minute
// before it expires, then refreshed once and shared through the store;
// two replicas refreshing at once with the single-use refresh token do
// not stop the connection: the one Slack refuses takes the other's.
func TestSlackTokenRotation(t *testing.T) {
	r := newRig(t, 2)
	r.slack.SetTokenRotation(12 * time.Hour)
	r.slack.SignIn("U1")
	if status, page := visit(t, r.browser(), r.slackLink("U1")); status != http.StatusOK {
		t.Fatalf("connect: %d\n%s", status, page)
	}
	<-r.connected
	ctx := t.Context()
	token := func(a *connect.Accounts) string {
		t.Helper()
		ts, _, err := a.UserToken(ctx, meetingbot.ProviderSlack, "U1")
		if err != nil {
			t.Fatal(err)
		}
		tok, err := ts.Token()
		if err != nil {
			t.Fatalf("Token: %v", err)
		}
		return tok.AccessToken
	}
	first := token(r.replica[0])
	for range 3 {
		if got := token(r.replica[0]); got != first {
			t.Errorf("Token of a valid token = %s, want %s again", got, first)
		}
	}
	if n := refreshes(r); n != 0 {
		t.Errorf("refreshes of a valid token = %d, want 0", n)
	}

	r.fakeClock.Advance(12*time.Hour - 30*time.Second) // within a minute of its expiry
	second := token(r.replica[0])
	if second == first || refreshes(r) != 1 {
		t.Fatalf("Token a minute before expiry = %s after %d refreshes, want a new token after 1", second, refreshes(r))
	}
	if got := token(r.replica[1]); got != second || refreshes(r) != 1 {
		t.Errorf("the other replica's Token = %s after %d refreshes, want the stored %s after 1", got, refreshes(r), second)
	}

	// Expired again. B reads the store, and its refresh reaches Slack only
	// after A used the same refresh token.
	r.fakeClock.Advance(12 * time.Hour)
	g := gate{arrived: make(chan struct{}), release: make(chan struct{})}
	b := r.accounts(r.stores[0], r.key, func(c *connect.Config) {
		sl, err := connect.NewSlack(connect.SlackConfig{
			ClientID: slacktest.ClientID, ClientSecret: slacktest.ClientSecret, APIURL: r.slack.URL(),
			RedirectURI: connect.RedirectURI(r.front.URL, meetingbot.ProviderSlack), TeamID: slacktest.TeamID, Now: r.fakeClock.Now,
			HTTPClient: &http.Client{Transport: g},
		})
		if err != nil {
			t.Fatal(err)
		}
		c.Providers[1] = sl
	})
	got := make(chan string)
	go func() {
		ts, _, err := b.UserToken(ctx, meetingbot.ProviderSlack, "U1")
		if err != nil {
			got <- "UserToken: " + err.Error()
			return
		}
		tok, err := ts.Token()
		if err != nil {
			got <- "Token: " + err.Error()
			return
		}
		got <- tok.AccessToken
	}()
	<-g.arrived
	third := token(r.replica[0])
	close(g.release)
	if raced := <-got; raced != third {
		t.Errorf("B's Token after A used the refresh token first = %q, want A's %s", raced, third)
	}
	select {
	case c := <-r.broken:
		t.Errorf("the connection of %s stopped: two replicas refreshing at once broke it", c.UserID)
	default:
	}
	if c, _, _ := r.stores[0].Connection(ctx, meetingbot.ProviderSlack, "U1"); c.State != meetingbot.ConnectionActive {
		t.Errorf("state after the race = %s, want active", c.State)
	}
}

// The grant must be for the bot's workspace: another is refused, and when
// the workspace cannot be told (auth.test did not answer at start-up, nor
// since) the grant is refused too, the page saying to try again, until it
// can.
func TestConnectSlackWorkspace(t *testing.T) {
	r := newRig(t, 1)
	r.slack.SignIn("U1")
	r.slack.SignInWorkspace("T0OTHER001")
	status, page := visit(t, r.browser(), r.slackLink("U1"))
	if status != http.StatusForbidden || !strings.Contains(page, "another Slack workspace than the bot's") {
		t.Errorf("another workspace: %d, want 403 saying so:\n%s", status, page)
	}
	if n := r.slack.UserTokens("U1"); n != 0 {
		t.Errorf("the other workspace's token is live (%d): it must be revoked", n)
	}
	r.slack.SignInWorkspace("")

	var answers atomic.Bool
	unknown := r.accounts(r.stores[0], r.key, func(c *connect.Config) {
		sl, err := connect.NewSlack(connect.SlackConfig{
			ClientID: slacktest.ClientID, ClientSecret: slacktest.ClientSecret, APIURL: r.slack.URL(),
			RedirectURI: connect.RedirectURI(r.front.URL, meetingbot.ProviderSlack), Now: r.fakeClock.Now,
			Team: func(context.Context) (string, error) {
				if !answers.Load() {
					return "", errors.New("auth.test: connection refused")
				}
				return slacktest.TeamID, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		c.Providers[1] = sl
	})
	r.replica[0] = unknown
	status, page = visit(t, r.browser(), r.slackLink("U1"))
	if status != http.StatusServiceUnavailable || !strings.Contains(page, "could not check that you signed in to the bot's Slack workspace") || !strings.Contains(page, "Try again in a minute") {
		t.Errorf("workspace unknown: %d, want 503 saying to try again:\n%s", status, page)
	}
	if cs, _ := r.stores[0].Connections(t.Context()); len(cs) != 0 || r.slack.UserTokens("U1") != 0 {
		t.Errorf("with the workspace unknown: %d connections stored, %d live tokens; want none", len(cs), r.slack.UserTokens("U1"))
	}
	answers.Store(true)
	if status, page := visit(t, r.browser(), r.slackLink("U1")); status != http.StatusOK {
		t.Errorf("once the workspace is known: %d\n%s", status, page)
	}
	if _, err := connect.NewSlack(connect.SlackConfig{ClientID: "x", ClientSecret: "y", APIURL: r.slack.URL()}); err == nil {
		t.Error("NewSlack with no way to know the workspace: no error")
	}
}

// Slack hands a person who authorizes the app again the token they have:
// a sign-in the bot refuses, of a user connected here (Bob opening
// Mallory's link), must not revoke it, or Bob's status stops.
func TestRefusedSlackSignInKeepsAConnectedUsersToken(t *testing.T) {
	r := newRig(t, 1)
	r.slack.SignIn("U2")
	if status, page := visit(t, r.browser(), r.slackLink("U2")); status != http.StatusOK {
		t.Fatalf("Bob's Slack sign-in: %d\n%s", status, page)
	}
	<-r.connected
	status, page := visit(t, r.browser(), r.slackLink("U3")) // Mallory's link, Bob signed in
	if status != http.StatusForbidden || !strings.Contains(page, "You signed in to Slack as another user") {
		t.Fatalf("Mallory's link, signed in as Bob: %d, want 403:\n%s", status, page)
	}
	if n := r.slack.UserTokens("U2"); n != 1 {
		t.Errorf("Bob's live Slack tokens = %d, want 1: a refused sign-in revoked his connection's", n)
	}
	ts, _, err := r.replica[0].UserToken(t.Context(), meetingbot.ProviderSlack, "U2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Token(); err != nil {
		t.Errorf("Bob's connection after the refused sign-in: %v", err)
	}
}

// With token rotation a Slack access token expires after 12 hours: a
// person who disconnects after a quiet day has their grant revoked at
// Slack all the same, with a refreshed token, so that the refresh token
// does not stay live there.
func TestDisconnectAfterAQuietDayRevokesAtSlack(t *testing.T) {
	r := newRig(t, 1)
	r.slack.SetClock(r.fakeClock.Now)
	r.slack.SetTokenRotation(12 * time.Hour)
	r.slack.SignIn("U1")
	if status, page := visit(t, r.browser(), r.slackLink("U1")); status != http.StatusOK {
		t.Fatalf("connect: %d %s", status, page)
	}
	<-r.connected
	r.fakeClock.Advance(13 * time.Hour)
	if _, ok, err := r.replica[0].Disconnect(t.Context(), meetingbot.ProviderSlack, "U1"); !ok || err != nil {
		t.Fatalf("Disconnect = %v, %v", ok, err)
	}
	for _, c := range r.slack.CallsTo("auth.revoke") {
		t.Logf("auth.revoke authorized=%v", c.Authorized)
	}
	if n := r.slack.RefreshTokens("U1"); n != 0 {
		t.Errorf("U1's refresh tokens live at Slack after Disconnect = %d, want 0: the revocation went out with an expired token", n)
	}
}
