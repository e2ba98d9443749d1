package connect_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
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
	if _, _, err := r.replica[0].Account(ctx, "bob@example.com"); !errors.Is(err, meetingbot.ErrNotConnected) {
		t.Errorf("Account(bob) = %v, want ErrNotConnected", err)
	}
	ts, name, err := r.replica[0].Account(ctx, "Alice@example.com")
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
	// Asked again for the token it handed out (the caller found it
	// refused or expired): refreshed and stored.
	second, err := ts.Token()
	if err != nil || second.AccessToken == first.AccessToken {
		t.Fatalf("Token again = %v, %v; want a refreshed token", second, err)
	}
	other, _, err := r.replica[1].Account(ctx, "alice@example.com")
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
	if _, _, err := r.replica[1].Account(ctx, "alice@example.com"); !errors.Is(err, meetingbot.ErrNotConnected) {
		t.Errorf("Account(alice) of a broken connection = %v, want ErrNotConnected", err)
	}
	counts, err := r.replica[0].Counts(ctx)
	if err != nil || counts[meetingbot.ProviderGoogle][meetingbot.ConnectionBroken] != 1 || counts[meetingbot.ProviderGoogle][meetingbot.ConnectionActive] != 0 {
		t.Errorf("Counts = %v, %v; want google broken 1, active 0", counts, err)
	}

	// Reconnecting makes it active again.
	connectAlice(t, r)
	if _, _, err := r.replica[0].Account(ctx, "alice@example.com"); err != nil {
		t.Errorf("Account(alice) after reconnecting: %v", err)
	}
}

// A 401 after a refresh stops the connection too.
func TestRefusedAfterRefresh(t *testing.T) {
	r := newRig(t, 1)
	connectAlice(t, r)
	_, name, err := r.replica[0].Account(t.Context(), "alice@example.com")
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
	newKey := newKey()
	rotated := r.accounts(r.stores[0], newKey+","+r.key)
	got, err := rotated.CheckKeys(ctx)
	if err != nil || got.Connections != 1 || got.Resealed != 1 || got.Unreadable != 0 {
		t.Fatalf("CheckKeys after a rotation = %+v, %v; want 1 connection resealed", got, err)
	}
	onlyNew := r.accounts(r.stores[0], newKey)
	if got, err := onlyNew.CheckKeys(ctx); err != nil || got.Unreadable != 0 || got.Resealed != 0 {
		t.Errorf("CheckKeys with the new key alone = %+v, %v; want all readable", got, err)
	}
	ts, _, err := onlyNew.Account(ctx, "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Token(); err != nil {
		t.Errorf("Token under the new key alone: %v", err)
	}
	wrong := r.accounts(r.stores[0], r.key) // the old key only: the token is now sealed under the new one
	if got, err := wrong.CheckKeys(ctx); err != nil || got.Unreadable != 1 {
		t.Errorf("CheckKeys with a key that opens nothing = %+v, %v; want 1 unreadable", got, err)
	}
}
