package connect_test

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/connect"
)

// connectAlice runs U1's flow to the end.
func connectAlice(t *testing.T, r *rig) {
	t.Helper()
	if status, page := visit(t, r.browser(), r.link("U1")); status != http.StatusOK {
		t.Fatalf("connect: %d\n%s", status, page)
	}
	<-r.connected
}

// A refreshed token is stored, sealed, and the other replica uses it
// without refreshing again; a revocation mid-run stops the connection at
// once and tells its person once, whichever replica finds it.
func TestTokensRefreshAndRevocation(t *testing.T) {
	r := newRig(t, 2)
	connectAlice(t, r)
	ctx := t.Context()
	if _, _, err := r.replica[0].Account(ctx, "U2", "bob@example.com"); !errors.Is(err, meetingbot.ErrNotConnected) {
		t.Errorf("Account(bob) = %v, want ErrNotConnected", err)
	}
	ts, name, err := r.replica[0].Account(ctx, "U1", "Alice@example.com")
	if err != nil || name == "" {
		t.Fatalf("Account(alice) = %q, %v", name, err)
	}
	first, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	_, refreshes, _ := r.google.OAuthCounts()
	if refreshes != 0 {
		t.Errorf("a fresh connection's token was refreshed (%d)", refreshes)
	}
	// Asked again while it is valid: the same token, no refresh.
	if again, err := ts.Token(); err != nil || again.AccessToken != first.AccessToken {
		t.Errorf("Token again = %v, %v; want the same token", again, err)
	}
	if _, refreshes, _ := r.google.OAuthCounts(); refreshes != 0 {
		t.Errorf("refreshes of a valid token = %d, want 0", refreshes)
	}
	// The API refused it (401): refreshed and stored.
	r.replica[0].Renew(name)
	second, err := ts.Token()
	if err != nil || second.AccessToken == first.AccessToken {
		t.Fatalf("Token after Renew = %v, %v; want a refreshed token", second, err)
	}
	other, _, err := r.replica[1].Account(ctx, "U1", "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	shared, err := other.Token()
	if err != nil || shared.AccessToken != second.AccessToken {
		t.Errorf("the other replica's token = %v, %v; want the one refreshed and stored", shared, err)
	}
	if _, refreshes, _ := r.google.OAuthCounts(); refreshes != 1 {
		t.Errorf("refreshes = %d, want 1", refreshes)
	}

	r.google.RevokeGrants("alice@example.com")
	r.replica[0].Renew(name) // the next read's 401
	_, err = ts.Token()
	if !errors.Is(err, meetingbot.ErrNotConnected) || !meetingbot.IsPermanent(err) {
		t.Fatalf("Token after revocation: %v, want a permanent ErrNotConnected", err)
	}
	if _, err := other.Token(); !errors.Is(err, meetingbot.ErrNotConnected) {
		t.Errorf("the other replica's Token after revocation: %v, want ErrNotConnected", err)
	}
	select {
	case c := <-r.broken:
		if c.UserID != "U1" || c.Reason == "" {
			t.Errorf("Broken(%s, %q)", c.UserID, c.Reason)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Broken was not called")
	}
	select {
	case c := <-r.broken:
		t.Errorf("Broken called twice (%s)", c.UserID)
	default:
	}
	c, _, _ := r.stores[1].Connection(ctx, meetingbot.ProviderGoogle, "U1")
	if c.State != meetingbot.ConnectionBroken {
		t.Errorf("state after revocation = %s, want broken", c.State)
	}
	if _, _, err := r.replica[1].Account(ctx, "U1", "alice@example.com"); !errors.Is(err, meetingbot.ErrNotConnected) {
		t.Errorf("Account(alice) of a broken connection = %v, want ErrNotConnected", err)
	}
	counts, err := r.replica[0].Counts(ctx)
	if err != nil || counts[meetingbot.ProviderGoogle][meetingbot.ConnectionBroken] != 1 || counts[meetingbot.ProviderGoogle][meetingbot.ConnectionActive] != 0 {
		t.Errorf("Counts = %v, %v; want google broken 1, active 0", counts, err)
	}

	// Reconnecting makes it active again.
	connectAlice(t, r)
	if _, _, err := r.replica[0].Account(ctx, "U1", "alice@example.com"); err != nil {
		t.Errorf("Account(alice) after reconnecting: %v", err)
	}
}

// A 401 after a refresh stops the connection too.
func TestRefusedAfterRefresh(t *testing.T) {
	r := newRig(t, 1)
	connectAlice(t, r)
	_, name, err := r.replica[0].Account(t.Context(), "U1", "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	r.replica[0].Refused(t.Context(), name, errors.New("401"))
	if c := <-r.broken; c.UserID != "U1" {
		t.Errorf("Broken(%s), want U1", c.UserID)
	}
}

// A rotation: tokens sealed under the old key are read, and sealed again
// under the new one; a key that opens none says how many it cannot read.
func TestKeyRotation(t *testing.T) {
	r := newRig(t, 1)
	connectAlice(t, r)
	ctx := t.Context()
	// Bob's connection stopped: it is sealed again all the same, so that
	// dropping the old key later leaves nothing unreadable.
	if status, page := visit(t, r.browser(), r.link("U2")); status != http.StatusOK {
		t.Fatalf("connect U2: %d\n%s", status, page)
	}
	<-r.connected
	bob, _, _ := r.stores[0].Connection(ctx, meetingbot.ProviderGoogle, "U2")
	if _, err := r.stores[0].BreakConnection(ctx, bob, "revoked", time.Now()); err != nil {
		t.Fatal(err)
	}
	newKey := newKey()
	rotated := r.accounts(r.stores[0], newKey+","+r.key)
	got, err := rotated.CheckKeys(ctx)
	if err != nil || got.Connections != 2 || got.Resealed != 2 || got.Unreadable != 0 || got.Stale != 0 {
		t.Fatalf("CheckKeys after a rotation = %+v, %v; want 2 connections resealed", got, err)
	}
	onlyNew := r.accounts(r.stores[0], newKey)
	if got, err := onlyNew.CheckKeys(ctx); err != nil || got.Unreadable != 0 || got.Resealed != 0 {
		t.Errorf("CheckKeys with the new key alone = %+v, %v; want all readable", got, err)
	}
	ts, _, err := onlyNew.Account(ctx, "U1", "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Token(); err != nil {
		t.Errorf("Token under the new key alone: %v", err)
	}
	wrong := r.accounts(r.stores[0], r.key) // the old key only: the tokens are now sealed under the new one
	if got, err := wrong.CheckKeys(ctx); err != nil || got.Unreadable != 2 {
		t.Errorf("CheckKeys with a key that opens nothing = %+v, %v; want 2 unreadable", got, err)
	}
}

// Read-only accounts (bot audit's) read the live bot's connections and
// change none of them: no token sealed again under the new key, no
// refreshed token stored, a refused grant stops nothing and tells no
// one, and nothing can be connected, disconnected or forgotten.
func TestReadOnlyChangesNothing(t *testing.T) {
	r := newRig(t, 1)
	connectAlice(t, r)
	r.slack.SetTokenRotation(12 * time.Hour)
	r.slack.SignIn("U2")
	if status, page := visit(t, r.browser(), r.slackLink("U2")); status != http.StatusOK {
		t.Fatalf("connect U2's Slack: %d\n%s", status, page)
	}
	<-r.connected
	ctx := t.Context()
	stored := func() map[string]meetingbot.Connection {
		cs, err := r.stores[0].Connections(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]meetingbot.Connection{}
		for _, c := range cs {
			out[string(c.Provider)+":"+c.UserID] = c
		}
		return out
	}
	before := stored()
	audit := r.accounts(r.stores[0], newKey()+","+r.key, func(c *connect.Config) { c.ReadOnly = true })

	got, err := audit.CheckKeys(ctx)
	if err != nil || got.Connections != 2 || got.Stale != 2 || got.Resealed != 0 {
		t.Errorf("read-only CheckKeys after a rotation = %+v, %v; want 2 stale, none resealed", got, err)
	}
	ts, _, err := audit.Account(ctx, "U1", "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	first, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	_, name, _ := audit.Account(ctx, "U1", "alice@example.com")
	audit.Renew(name) // refused by the API: refreshed, in memory only
	refreshed, err := ts.Token()
	if err != nil || refreshed.AccessToken == first.AccessToken {
		t.Fatalf("read-only Token after Renew = %v, %v; want a refreshed token", refreshed, err)
	}
	if again, err := ts.Token(); err != nil || again.AccessToken != refreshed.AccessToken {
		t.Errorf("read-only Token after its refresh = %v, %v; want the refreshed one, not the stored one", again, err)
	}
	slackTS, _, err := audit.UserToken(ctx, meetingbot.ProviderSlack, "U2")
	if err != nil {
		t.Fatal(err)
	}
	r.fakeClock.Advance(13 * time.Hour) // U2's rotating token expires: only the bot refreshes it
	defer r.fakeClock.Advance(-13 * time.Hour)
	if tok, err := slackTS.Token(); err == nil {
		t.Errorf("read-only Token of an expired Slack token = %v, want an error (its refresh token works once)", tok)
	}
	r.google.RevokeGrants("alice@example.com")
	audit.Renew(name)
	if _, err := ts.Token(); !errors.Is(err, meetingbot.ErrNotConnected) {
		t.Errorf("read-only Token after a revocation: %v, want ErrNotConnected", err)
	}
	audit.Refused(ctx, name, errors.New("401"))
	audit.Stop(ctx, meetingbot.ProviderSlack, "U2")
	if _, err := audit.Link(ctx, meetingbot.ProviderGoogle, "U1"); err == nil {
		t.Error("read-only Link: no error")
	}
	if _, ok, err := audit.Disconnect(ctx, meetingbot.ProviderGoogle, "U1"); ok || err == nil {
		t.Errorf("read-only Disconnect = %v, %v; want refused", ok, err)
	}
	if ok, err := audit.Forget(ctx, meetingbot.ProviderSlack, "U2"); ok || err == nil {
		t.Errorf("read-only Forget = %v, %v; want refused", ok, err)
	}
	select {
	case c := <-r.broken:
		t.Errorf("read-only accounts told %s their connection stopped", c.UserID)
	default:
	}
	after := stored()
	for k, c := range before {
		a := after[k]
		if a.State != c.State || !bytes.Equal(a.Token, c.Token) || !a.UpdatedAt.Equal(c.UpdatedAt) {
			t.Errorf("connection %s after read-only use: %s, token changed %v; want it as stored (%s)", k, a.State, !bytes.Equal(a.Token, c.Token), c.State)
		}
	}
	if n := r.slack.UserTokens("U2"); n != 1 {
		t.Errorf("U2's Slack tokens = %d, want 1: the read-only accounts rotated it", n)
	}
}

// A token no key opens (the key was replaced without keeping the old
// one) stops its connection when it is needed: its person is told once,
// whichever replica finds it, and the error says what the operator does.
func TestUnreadableTokenStopsTheConnection(t *testing.T) {
	r := newRig(t, 1)
	connectAlice(t, r)
	ctx := t.Context()
	key := newKey()
	replicas := []*connect.Accounts{r.accounts(r.stores[0], key), r.accounts(r.stores[0], key)}
	for i, a := range replicas {
		ts, _, err := a.Account(ctx, "U1", "alice@example.com")
		if i == 1 {
			if !errors.Is(err, meetingbot.ErrNotConnected) {
				t.Errorf("Account(alice) on the other replica once stopped: %v, want ErrNotConnected", err)
			}
			if ts == nil {
				continue
			}
		} else if err != nil {
			t.Fatal(err)
		}
		_, err = ts.Token()
		if !errors.Is(err, meetingbot.ErrNotConnected) || !meetingbot.IsPermanent(err) || !strings.Contains(err.Error(), "TOKEN_ENCRYPTION_KEY=<new>,<old>") {
			t.Errorf("replica %d: Token under another key: %v, want a permanent ErrNotConnected naming TOKEN_ENCRYPTION_KEY", i, err)
		}
	}
	select {
	case c := <-r.broken:
		if c.UserID != "U1" || !strings.Contains(c.Reason, "the key it is kept under changed") {
			t.Errorf("Broken(%s, %q), want U1 told the key changed", c.UserID, c.Reason)
		}
	default:
		t.Fatal("Broken was not called: the person is never told")
	}
	select {
	case c := <-r.broken:
		t.Errorf("Broken called twice (%s)", c.UserID)
	default:
	}
	if c, _, _ := r.stores[0].Connection(ctx, meetingbot.ProviderGoogle, "U1"); c.State != meetingbot.ConnectionBroken {
		t.Errorf("state = %s, want broken", c.State)
	}
}
