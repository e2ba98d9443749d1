package meetingbot

import (
	"errors"
	"fmt"
	"time"
)

// Provider names a service people connect an account of their own with
// OAuth 2.0 (docs/design.md, "People connect their own accounts"). It is the
// first path element of the flow's endpoints (/google/oauth/start).
type Provider string

// The providers people connect.
const (
	// ProviderGoogle is a person's Google account: their calendar is read
	// with their own token.
	ProviderGoogle Provider = "google"
	// ProviderSlack is a person's Slack user: their status is set with
	// their own user token.
	ProviderSlack Provider = "slack"
)

// ConnectionState says whether a connection may be used.
type ConnectionState string

// States of a connection.
const (
	// ConnectionActive is a connection in use.
	ConnectionActive ConnectionState = "active"
	// ConnectionBroken is a grant the provider no longer honours (revoked,
	// expired, unused for six months): it is not used until the person
	// connects again.
	ConnectionBroken ConnectionState = "broken"
)

// Connection is one person's account connected to the bot: who connected
// (a Slack user), which account (a Google email, a Slack user ID), and the
// grant's tokens sealed by package keyring. Stores keep Token as the bytes
// they are given and never see a key.
type Connection struct {
	Provider Provider
	// UserID is the Slack user who connected.
	UserID string
	// Account is the account connected: for Google the email of the ID
	// token, lower case; for Slack the user ID of the grant.
	Account string
	// Scopes are the scopes granted, sorted.
	Scopes []string
	// Token is the grant (access token, refresh token, expiry) sealed by
	// the keyring, bound to Provider and UserID. A secret.
	Token []byte
	State ConnectionState
	// Reason says, for a person, why a broken connection stopped.
	Reason string
	// CreatedAt is when the person connected: it tells a connection from
	// the one made again after it (see storage's SetConnectionToken).
	CreatedAt time.Time
	// UpdatedAt is when the token or the state last changed.
	UpdatedAt time.Time
}

// OAuthStep says which step of the browser flow an OAuthState is.
type OAuthStep string

// Steps of the browser flow.
const (
	// OAuthLink is the short-lived, single-use link given to one person in
	// Slack: opening it starts the flow.
	OAuthLink OAuthStep = "link"
	// OAuthConsent is the state of a consent page: the callback finishes
	// it, once, in the browser that started it.
	OAuthConsent OAuthStep = "consent"
)

// OAuthState is one step of a connection being made, kept in the store so
// that any replica can take the next step. ID is a hash of the secret the
// browser carries (the link's ticket, the state parameter), never the
// secret itself.
type OAuthState struct {
	ID       string
	Step     OAuthStep
	Provider Provider
	// UserID is the Slack user the flow connects.
	UserID string
	// Binding is a hash of the cookie that binds a consent to the browser
	// that started it; "" for a link.
	Binding string
	// Verifier is the PKCE code verifier, sealed; nil for a link.
	Verifier []byte
	// Scopes are the scopes the flow asks for beyond the provider's own
	// (incremental authorization: ScopeCalendarEvents for people who
	// answer invitations from Slack); nil for none.
	Scopes []string
	// ExpiresAt is when the step stops being accepted.
	ExpiresAt time.Time
}

// ErrNotConnected is what a read with a person's own token matches when
// that person has no connection in use (none, disconnected, or broken).
var ErrNotConnected = errors.New("account not connected")

// Check reports whether a store may keep c: a known provider and state,
// a user, an account and a token. Its error matches ErrInvalid.
func (c Connection) Check() error {
	switch {
	case c.Provider != ProviderGoogle && c.Provider != ProviderSlack:
		return fmt.Errorf("connection: provider %q: %w", c.Provider, ErrInvalid)
	case c.State != ConnectionActive && c.State != ConnectionBroken:
		return fmt.Errorf("connection: state %q: %w", c.State, ErrInvalid)
	case c.UserID == "" || c.Account == "":
		return fmt.Errorf("connection: no user or account: %w", ErrInvalid)
	case len(c.Token) == 0:
		return fmt.Errorf("connection: no token: %w", ErrInvalid)
	}
	return nil
}

// Check reports whether a store may keep st: an ID, a known step and
// provider, a user and an expiry. Its error matches ErrInvalid.
func (st OAuthState) Check() error {
	switch {
	case st.ID == "" || st.UserID == "" || st.ExpiresAt.IsZero():
		return fmt.Errorf("oauth state: no ID, user or expiry: %w", ErrInvalid)
	case st.Step != OAuthLink && st.Step != OAuthConsent:
		return fmt.Errorf("oauth state: step %q: %w", st.Step, ErrInvalid)
	case st.Provider != ProviderGoogle && st.Provider != ProviderSlack:
		return fmt.Errorf("oauth state: provider %q: %w", st.Provider, ErrInvalid)
	}
	return nil
}

// StatusSettings are how one person wants their Slack status during
// meetings.
type StatusSettings struct {
	UserID string
	// Titles shows the meeting's title instead of "In a meeting", except
	// for a private event.
	Titles bool
	// OutOfOffice shows "Out of office" during the person's out-of-office
	// events.
	OutOfOffice bool
	UpdatedAt   time.Time
}
