package connect_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
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
	r.clock.Advance(13 * time.Hour) // past its expiry: refreshed
	defer r.clock.Advance(-13 * time.Hour)
	second, err := ts.Token()
	if err != nil || second.AccessToken == first.AccessToken {
		t.Fatalf("Token after expiry = %v, %v; want a refreshed token", second, err)
	}

	r.slack.RevokeUserTokens("U1")
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
