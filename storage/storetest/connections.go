package storetest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
)

// ConnectionStore is what both backends provide for the accounts people
// connect (migration 009).
type ConnectionStore interface {
	PutConnection(ctx context.Context, c meetingbot.Connection) error
	Connection(ctx context.Context, provider meetingbot.Provider, userID string) (meetingbot.Connection, bool, error)
	ConnectionOf(ctx context.Context, provider meetingbot.Provider, account string) (meetingbot.Connection, bool, error)
	Connections(ctx context.Context) ([]meetingbot.Connection, error)
	SetConnectionToken(ctx context.Context, c meetingbot.Connection) (bool, error)
	ResealConnection(ctx context.Context, c meetingbot.Connection, sealed []byte) (bool, error)
	BreakConnection(ctx context.Context, c meetingbot.Connection, reason string, at time.Time) (bool, error)
	DeleteConnection(ctx context.Context, provider meetingbot.Provider, userID string) (bool, error)
	PutOAuthState(ctx context.Context, st meetingbot.OAuthState) error
	OAuthState(ctx context.Context, id string) (meetingbot.OAuthState, bool, error)
	TakeOAuthState(ctx context.Context, id string) (meetingbot.OAuthState, bool, error)
	PruneOAuthStates(ctx context.Context, before time.Time) (int64, error)
	StatusSettingsOf(ctx context.Context, userID string) (meetingbot.StatusSettings, bool, error)
	PutStatusSettings(ctx context.Context, set meetingbot.StatusSettings) error
}

// ConnectionOpener opens a ConnectionStore on one database, as another
// process would.
type ConnectionOpener func(t *testing.T) ConnectionStore

// RunConnections runs the contract of the connection tables; fresh is as
// Run's.
func RunConnections(t *testing.T, fresh func(t *testing.T) ConnectionOpener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open ConnectionOpener)
	}{
		{"ConnectionsSurviveRestartAsSealedBytes", testConnections},
		{"AnAccountIsConnectedByOnePerson", testOneAccountOnePerson},
		{"ALateRefreshNeverBringsBackAConnection", testLateRefresh},
		{"OneOfManyBreaksAConnection", testBreakOnce},
		{"AResealKeepsWhatChangedMeanwhile", testReseal},
		{"AStepIsTakenOnceByOneOfMany", testTakeOnce},
		{"WritesRefuseWhatCannotBeUsed", testConnectionWritesRefuse},
		{"StatusSettingsSurviveRestart", testStatusSettings},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, fresh(t))
		})
	}
}

var connectedAt = time.Date(2026, 11, 30, 8, 0, 0, 123_000_000, time.UTC)

func connection(user, account string) meetingbot.Connection {
	return meetingbot.Connection{
		Provider: meetingbot.ProviderGoogle, UserID: user, Account: account,
		Scopes: []string{"email", "https://www.googleapis.com/auth/calendar.events.readonly", "openid"},
		Token:  []byte{0x01, 0x00, 0xff, 'x', 0x80}, State: meetingbot.ConnectionActive,
		CreatedAt: connectedAt, UpdatedAt: connectedAt,
	}
}

func testConnections(t *testing.T, open ConnectionOpener) {
	ctx := t.Context()
	s := open(t)
	_, ok, err := s.Connection(ctx, meetingbot.ProviderGoogle, "U1")
	require.NoError(t, err)
	assert.False(t, ok, "Connection(U1) of a new store: found")

	alice := connection("U1", "alice@example.com")
	slack := alice
	slack.Provider, slack.Account, slack.Scopes = meetingbot.ProviderSlack, "U1", []string{"users.profile:read", "users.profile:write"}
	bob := connection("U2", "bob@example.com")
	for _, c := range []meetingbot.Connection{alice, slack, bob} {
		require.NoError(t, s.PutConnection(ctx, c))
	}

	restarted := open(t)
	got, ok, err := restarted.Connection(ctx, meetingbot.ProviderGoogle, "U1")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, alice, got, "Connection(google, U1) after a restart: the sealed bytes and instants as put")
	got, ok, err = restarted.ConnectionOf(ctx, meetingbot.ProviderGoogle, "bob@example.com")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, bob, got, "ConnectionOf(google, bob@example.com)")
	_, ok, err = restarted.ConnectionOf(ctx, meetingbot.ProviderGoogle, "U1")
	require.NoError(t, err)
	assert.False(t, ok, "ConnectionOf(google, U1): a Slack account found as a Google one")
	all, err := restarted.Connections(ctx)
	require.NoError(t, err)
	assert.Equal(t, []meetingbot.Connection{alice, bob, slack}, all, "Connections, by provider and user")

	// Connecting again replaces the connection.
	again := alice
	again.Token, again.CreatedAt, again.UpdatedAt = []byte("new"), connectedAt.Add(time.Hour), connectedAt.Add(time.Hour)
	require.NoError(t, restarted.PutConnection(ctx, again))
	got, _, err = s.Connection(ctx, meetingbot.ProviderGoogle, "U1")
	require.NoError(t, err)
	assert.Equal(t, again, got, "Connection(U1) after connecting again")

	deleted, err := s.DeleteConnection(ctx, meetingbot.ProviderGoogle, "U1")
	require.NoError(t, err)
	assert.True(t, deleted, "DeleteConnection(U1)")
	deleted, err = s.DeleteConnection(ctx, meetingbot.ProviderGoogle, "U1")
	require.NoError(t, err)
	assert.False(t, deleted, "DeleteConnection(U1) twice")
	_, ok, err = restarted.Connection(ctx, meetingbot.ProviderSlack, "U1")
	require.NoError(t, err)
	assert.True(t, ok, "U1's Slack connection after deleting their Google one: gone")
}

// The person who now has an email in Slack connects it: the connection
// of whoever had it before goes.
func testOneAccountOnePerson(t *testing.T, open ConnectionOpener) {
	ctx := t.Context()
	s := open(t)
	require.NoError(t, s.PutConnection(ctx, connection("U1", "shared@example.com")))
	require.NoError(t, s.PutConnection(ctx, connection("U2", "shared@example.com")))
	_, ok, err := s.Connection(ctx, meetingbot.ProviderGoogle, "U1")
	require.NoError(t, err)
	assert.False(t, ok, "U1's connection of an account U2 connected since: kept")
	got, ok, err := s.ConnectionOf(ctx, meetingbot.ProviderGoogle, "shared@example.com")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "U2", got.UserID, "ConnectionOf(shared@example.com).UserID")
}

func testLateRefresh(t *testing.T, open ConnectionOpener) {
	ctx := t.Context()
	s := open(t)
	c := connection("U1", "alice@example.com")
	require.NoError(t, s.PutConnection(ctx, c))

	refreshed := c
	refreshed.Token, refreshed.UpdatedAt = []byte("refreshed"), connectedAt.Add(time.Hour)
	ok, err := s.SetConnectionToken(ctx, refreshed)
	require.NoError(t, err)
	assert.True(t, ok, "SetConnectionToken of the connection stored")
	got, _, err := open(t).Connection(ctx, meetingbot.ProviderGoogle, "U1")
	require.NoError(t, err)
	assert.Equal(t, refreshed, got, "Connection after SetConnectionToken")

	// Made again meanwhile: the refresh of the old one changes nothing.
	remade := c
	remade.Token, remade.CreatedAt, remade.UpdatedAt = []byte("remade"), connectedAt.Add(2*time.Hour), connectedAt.Add(2*time.Hour)
	require.NoError(t, s.PutConnection(ctx, remade))
	ok, err = s.SetConnectionToken(ctx, refreshed)
	require.NoError(t, err)
	assert.False(t, ok, "SetConnectionToken of a connection made again since")
	got, _, err = s.Connection(ctx, meetingbot.ProviderGoogle, "U1")
	require.NoError(t, err)
	assert.Equal(t, []byte("remade"), got.Token, "the token after a late refresh of the old connection")

	// Broken or deleted meanwhile: the same.
	_, err = s.BreakConnection(ctx, remade, "revoked", connectedAt.Add(3*time.Hour))
	require.NoError(t, err)
	late := remade
	late.Token = []byte("late")
	ok, err = s.SetConnectionToken(ctx, late)
	require.NoError(t, err)
	assert.False(t, ok, "SetConnectionToken of a broken connection")
	_, err = s.DeleteConnection(ctx, meetingbot.ProviderGoogle, "U1")
	require.NoError(t, err)
	ok, err = s.SetConnectionToken(ctx, remade)
	require.NoError(t, err)
	assert.False(t, ok, "SetConnectionToken of a deleted connection")
	_, found, err := s.Connection(ctx, meetingbot.ProviderGoogle, "U1")
	require.NoError(t, err)
	assert.False(t, found, "a deleted connection came back")
}

// Several replicas find a grant refused at once: one of them breaks the
// connection (and tells the person).
func testBreakOnce(t *testing.T, open ConnectionOpener) {
	ctx := t.Context()
	c := connection("U1", "alice@example.com")
	require.NoError(t, open(t).PutConnection(ctx, c))
	stores := []ConnectionStore{open(t), open(t), open(t)}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			ok, err := stores[i%len(stores)].BreakConnection(ctx, c, "invalid_grant", connectedAt.Add(time.Minute))
			assert.NoError(t, err)
			if ok {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	assert.EqualValues(t, 1, wins.Load(), "BreakConnection calls that broke the connection")
	got, _, err := stores[0].Connection(ctx, meetingbot.ProviderGoogle, "U1")
	require.NoError(t, err)
	assert.Equal(t, meetingbot.ConnectionBroken, got.State)
	assert.Equal(t, "invalid_grant", got.Reason)
	assert.Equal(t, connectedAt.Add(time.Minute), got.UpdatedAt)
}

func testTakeOnce(t *testing.T, open ConnectionOpener) {
	ctx := t.Context()
	s := open(t)
	st := meetingbot.OAuthState{ID: "9f86d081884c7d65", Step: meetingbot.OAuthConsent, Provider: meetingbot.ProviderGoogle, UserID: "U1",
		Binding: "b1", Verifier: []byte{1, 2, 0, 3}, ExpiresAt: connectedAt.Add(10 * time.Minute),
		Scopes: []string{meetingbot.ScopeCalendarEvents}}
	link := meetingbot.OAuthState{ID: "link-1", Step: meetingbot.OAuthLink, Provider: meetingbot.ProviderSlack, UserID: "U2", ExpiresAt: connectedAt.Add(time.Minute)}
	require.NoError(t, s.PutOAuthState(ctx, st))
	require.NoError(t, s.PutOAuthState(ctx, link))
	assert.Error(t, s.PutOAuthState(ctx, st), "PutOAuthState of an ID stored already")
	for range 2 {
		got, ok, err := open(t).OAuthState(ctx, st.ID)
		require.NoError(t, err)
		require.True(t, ok, "OAuthState of a step stored")
		assert.Equal(t, st, got, "OAuthState: the step as put, left in place")
	}
	_, ok, err := s.OAuthState(ctx, "unknown")
	require.NoError(t, err)
	assert.False(t, ok, "OAuthState of an ID never stored")

	stores := []ConnectionStore{open(t), open(t), open(t)}
	var takers atomic.Int32
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			got, ok, err := stores[i%len(stores)].TakeOAuthState(ctx, st.ID)
			assert.NoError(t, err)
			if ok {
				takers.Add(1)
				assert.Equal(t, st, got, "the step taken")
			}
		})
	}
	wg.Wait()
	assert.EqualValues(t, 1, takers.Load(), "TakeOAuthState calls that got the step")

	n, err := s.PruneOAuthStates(ctx, connectedAt.Add(time.Minute))
	require.NoError(t, err)
	assert.EqualValues(t, 0, n, "PruneOAuthStates of a step expiring at the instant")
	n, err = s.PruneOAuthStates(ctx, connectedAt.Add(time.Minute+time.Millisecond))
	require.NoError(t, err)
	assert.EqualValues(t, 1, n, "PruneOAuthStates after the link expired")
	_, ok, err = s.TakeOAuthState(ctx, link.ID)
	require.NoError(t, err)
	assert.False(t, ok, "TakeOAuthState of a pruned step")
}

func testConnectionWritesRefuse(t *testing.T, open ConnectionOpener) {
	ctx := t.Context()
	s := open(t)
	for name, change := range map[string]func(*meetingbot.Connection){
		"no user":          func(c *meetingbot.Connection) { c.UserID = "" },
		"no account":       func(c *meetingbot.Connection) { c.Account = "" },
		"no token":         func(c *meetingbot.Connection) { c.Token = nil },
		"unknown provider": func(c *meetingbot.Connection) { c.Provider = "github" },
		"unknown state":    func(c *meetingbot.Connection) { c.State = "paused" },
	} {
		c := connection("U1", "alice@example.com")
		change(&c)
		err := s.PutConnection(ctx, c)
		assert.True(t, errors.Is(err, meetingbot.ErrInvalid), "PutConnection with %s: err = %v, want ErrInvalid", name, err)
	}
	err := s.PutOAuthState(ctx, meetingbot.OAuthState{ID: "x", Step: "other", Provider: meetingbot.ProviderGoogle, UserID: "U1", ExpiresAt: connectedAt})
	assert.True(t, errors.Is(err, meetingbot.ErrInvalid), "PutOAuthState with an unknown step: err = %v, want ErrInvalid", err)
	all, err := s.Connections(ctx)
	require.NoError(t, err)
	assert.Empty(t, all, "Connections after refused writes")
}

func testStatusSettings(t *testing.T, open ConnectionOpener) {
	ctx := t.Context()
	s := open(t)
	got, ok, err := s.StatusSettingsOf(ctx, "U1")
	require.NoError(t, err)
	assert.False(t, ok, "StatusSettingsOf(U1) of a new store: found")
	assert.Equal(t, meetingbot.StatusSettings{UserID: "U1"}, got, "the settings of someone who set none")
	set := meetingbot.StatusSettings{UserID: "U1", Titles: true, UpdatedAt: connectedAt}
	require.NoError(t, s.PutStatusSettings(ctx, set))
	got, ok, err = open(t).StatusSettingsOf(ctx, "U1")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, set, got, "StatusSettingsOf after a restart")
	set.Titles, set.UpdatedAt = false, connectedAt.Add(time.Minute)
	require.NoError(t, s.PutStatusSettings(ctx, set))
	got, _, err = s.StatusSettingsOf(ctx, "U1")
	require.NoError(t, err)
	assert.Equal(t, set, got, "StatusSettingsOf after turning titles off")
	set.OutOfOffice, set.UpdatedAt = true, connectedAt.Add(2*time.Minute)
	require.NoError(t, s.PutStatusSettings(ctx, set))
	got, _, err = open(t).StatusSettingsOf(ctx, "U1")
	require.NoError(t, err)
	assert.Equal(t, set, got, "StatusSettingsOf after turning out of office on")
	assert.True(t, errors.Is(s.PutStatusSettings(ctx, meetingbot.StatusSettings{}), meetingbot.ErrInvalid), "PutStatusSettings without a user")
}

// A token sealed again under a new key replaces the one it was read as,
// in an active or a broken connection, and never a token refreshed or a
// connection made again since.
func testReseal(t *testing.T, open ConnectionOpener) {
	ctx := t.Context()
	s := open(t)
	c := connection("U1", "alice@example.com")
	require.NoError(t, s.PutConnection(ctx, c))
	_, err := s.BreakConnection(ctx, c, "revoked", connectedAt.Add(time.Minute))
	require.NoError(t, err)

	resealed := c
	resealed.Token = []byte("resealed")
	ok, err := open(t).ResealConnection(ctx, resealed, c.Token)
	require.NoError(t, err)
	assert.True(t, ok, "ResealConnection of a broken connection")
	got, _, err := s.Connection(ctx, meetingbot.ProviderGoogle, "U1")
	require.NoError(t, err)
	assert.Equal(t, []byte("resealed"), got.Token, "the token after a reseal")
	assert.Equal(t, meetingbot.ConnectionBroken, got.State, "the state after a reseal")
	assert.Equal(t, connectedAt.Add(time.Minute), got.UpdatedAt, "UpdatedAt after a reseal: the grant did not change")

	// What it was read as changed meanwhile: the reseal changes nothing.
	again := c
	again.Token = []byte("again")
	ok, err = s.ResealConnection(ctx, again, c.Token)
	require.NoError(t, err)
	assert.False(t, ok, "ResealConnection of a token changed since it was read")
	remade := c
	remade.Token, remade.CreatedAt = []byte("remade"), connectedAt.Add(time.Hour)
	require.NoError(t, s.PutConnection(ctx, remade))
	late := c
	late.Token = []byte("late")
	ok, err = s.ResealConnection(ctx, late, []byte("resealed"))
	require.NoError(t, err)
	assert.False(t, ok, "ResealConnection of a connection made again since")
	got, _, err = s.Connection(ctx, meetingbot.ProviderGoogle, "U1")
	require.NoError(t, err)
	assert.Equal(t, []byte("remade"), got.Token, "the token after late reseals")
}
