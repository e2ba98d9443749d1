// Package connect lets people connect accounts of their own to the bot
// with OAuth 2.0 in the browser: their Google account, so that their
// calendar is read with their own token, and (for status) their Slack
// user. The flow is written once, for every Provider:
//
//  1. Link gives one person a short-lived, single-use link to
//     PUBLIC_URL/<provider>/oauth/start (in the Home tab or an ephemeral
//     reply in Slack).
//  2. Start takes the link (once), binds the browser to a fresh state and
//     PKCE verifier kept in the Store (so that any replica can finish the
//     flow) with an HttpOnly, Secure, SameSite=Lax cookie, and redirects
//     to the provider's consent page.
//  3. The callback checks the state against the cookie and the Store
//     (single use, 10 minutes), exchanges the code with the verifier,
//     requires the account to be the person's own (their Slack profile
//     email for Google), and keeps the grant sealed by the keyring.
//
// Every page a person sees comes from html/template and carries no
// secret, state or token. Tokens are read back through Accounts.Account
// (the calendar's reads), refreshed by the oauth2 library and stored again
// when they change; a grant the provider refuses stops that connection at
// once and is told to its person, once, through Config.Broken.
package connect

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/keyring"
	"github.com/prometheus/client_golang/prometheus"
)

// Lifetimes of the flow's steps.
const (
	// LinkTTL is how long a link given in Slack may be opened.
	LinkTTL = 10 * time.Minute
	// ConsentTTL is how long a consent page may take to come back.
	ConsentTTL = 10 * time.Minute
)

// Provider is one OAuth 2.0 service people connect an account of. The
// flow asks it only what differs between services.
type Provider interface {
	// Name is the provider in paths, the store and the sealing context.
	Name() meetingbot.Provider
	// Title names the service for people: "Google Calendar".
	Title() string
	// AuthCodeURL returns the consent page's URL for state, with the PKCE
	// S256 challenge of verifier and hint, the account expected ("" for
	// none), asking for scopes beyond the provider's own (incremental
	// authorization; nil for none).
	AuthCodeURL(state, verifier, hint string, scopes []string) string
	// Exchange trades the callback's code and the verifier for a grant. An
	// error that is a *Refusal says what the person is told.
	Exchange(ctx context.Context, code, verifier string) (Grant, error)
	// Expect returns the account userID (a Slack user) must connect, as
	// Grant.Account names it.
	Expect(ctx context.Context, userID string) (string, error)
	// Revoke ends the grant tok belongs to at the provider.
	Revoke(ctx context.Context, tok *oauth2.Token) error
	// TokenSource returns tok, refreshed through the provider when it
	// expires.
	TokenSource(ctx context.Context, tok *oauth2.Token) oauth2.TokenSource
}

// Grant is what an exchange obtained: the tokens, the account they act
// for and the scopes granted.
type Grant struct {
	Token   *oauth2.Token
	Account string
	Scopes  []string
}

// Refusal is a grant the flow will not keep (the wrong account, a scope
// left out), said to the person on the failure page.
type Refusal struct {
	// Status is the page's HTTP status.
	Status int
	// What happened and what to do, each a sentence.
	What, Fix string
}

func (r *Refusal) Error() string { return r.What }

// Store keeps connections and the steps of flows; sqlite.Store and
// postgres.Store provide it.
type Store interface {
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
}

// Config configures Accounts. Store, Keyring, PublicURL and at least one
// provider are required.
type Config struct {
	Store   Store
	Keyring *keyring.Keyring
	// PublicURL is the bot's https base URL (PUBLIC_URL), without a
	// trailing slash.
	PublicURL string
	Providers []Provider
	// Command is the slash command, for the pages' advice; "/meetingbot".
	Command string
	// HTTPClient carries token, refresh and revoke requests; a client with
	// a 30s timeout by default.
	HTTPClient *http.Client
	// Registerer, if set, gets the gauge of the connections by state,
	// meetingbot_connections.
	Registerer prometheus.Registerer
	Now        func() time.Time
	Logger     *slog.Logger
	// ReadOnly makes Accounts change nothing stored, for bot audit, which
	// reads the live bot's database: a token sealed under an old key is
	// not sealed again, a refreshed token is kept in memory only (a Slack
	// one, whose refresh token is single use with rotation, is never
	// refreshed), and a grant the provider refuses is an error matching
	// meetingbot.ErrNotConnected that stops nothing and tells no one.
	// Link, Disconnect, Forget and Stop refuse or do nothing.
	ReadOnly bool
}

// errReadOnly is what Accounts made ReadOnly answer a change with.
var errReadOnly = errors.New("connect: read-only (bot audit changes no connection)")

// Accounts is the accounts people connect: the flow's HTTP handler, the
// links, disconnection, and the tokens the calendar reads with. It is
// safe for concurrent use.
type Accounts struct {
	cfg       Config
	providers map[meetingbot.Provider]Provider
	command   string
	now       func() time.Time
	log       *slog.Logger
	http      *http.Client

	gauge *prometheus.GaugeVec // nil without Config.Registerer

	mu    sync.Mutex
	hooks []Hooks
	// found caches, per calendar ID, the connection it is read with (nil
	// for none) for lookupTTL; sources holds the token source of each
	// connection in use, by its name.
	found   map[string]lookup
	sources map[string]*source
}

type lookup struct {
	c  *meetingbot.Connection
	at time.Time
}

// New checks cfg and returns Accounts. It makes no request.
func New(cfg Config) (*Accounts, error) {
	switch {
	case cfg.Store == nil:
		return nil, errors.New("connect: no Store")
	case cfg.Keyring == nil:
		return nil, errors.New("connect: no keyring (TOKEN_ENCRYPTION_KEY)")
	case !strings.HasPrefix(cfg.PublicURL, "https://") && !strings.HasPrefix(cfg.PublicURL, "http://"):
		return nil, fmt.Errorf("connect: PUBLIC_URL %q is not an https URL", cfg.PublicURL)
	case len(cfg.Providers) == 0:
		return nil, errors.New("connect: no provider")
	}
	a := &Accounts{
		cfg:       cfg,
		providers: map[meetingbot.Provider]Provider{},
		command:   cmp.Or(cfg.Command, "/meetingbot"),
		now:       cfg.Now,
		log:       cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		http:      cmp.Or(cfg.HTTPClient, &http.Client{Timeout: 30 * time.Second}),
		found:     map[string]lookup{},
		sources:   map[string]*source{},
	}
	if a.now == nil {
		a.now = time.Now
	}
	a.cfg.PublicURL = strings.TrimSuffix(cfg.PublicURL, "/")
	for _, p := range cfg.Providers {
		a.providers[p.Name()] = p
	}
	if cfg.Registerer != nil {
		a.gauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "meetingbot_connections",
			Help: "People's own connected accounts, by state: active ones are read with, broken ones (a revoked or expired grant) wait for their person to reconnect.",
		}, []string{"state"})
		if err := cfg.Registerer.Register(a.gauge); err != nil {
			return nil, fmt.Errorf("connect: %w", err)
		}
	}
	return a, nil
}

// Enabled reports whether people may connect provider.
func (a *Accounts) Enabled(provider meetingbot.Provider) bool { return a.providers[provider] != nil }

// StartPath and CallbackPath are the flow's paths for provider, under
// PUBLIC_URL.
func StartPath(provider meetingbot.Provider) string { return "/" + string(provider) + "/oauth/start" }
func CallbackPath(provider meetingbot.Provider) string {
	return "/" + string(provider) + "/oauth/callback"
}

// RedirectURI is the callback's URL for provider under publicURL: the
// redirect URI the provider's client must list.
func RedirectURI(publicURL string, provider meetingbot.Provider) string {
	return strings.TrimSuffix(publicURL, "/") + CallbackPath(provider)
}

// hash names a secret the browser carries in the store: its SHA-256.
func hash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Link returns a link that starts connecting userID's account of
// provider, valid for LinkTTL and once. Give it to that person only.
func (a *Accounts) Link(ctx context.Context, provider meetingbot.Provider, userID string) (string, error) {
	return a.LinkScopes(ctx, provider, userID, nil)
}

// LinkScopes is Link asking for scopes beyond the provider's own, granted
// with those given before (include_granted_scopes): for Google,
// meetingbot.ScopeCalendarEvents, which only people who answer
// invitations from Slack are asked for. The connection made records the
// scopes the provider granted, whatever was asked.
func (a *Accounts) LinkScopes(ctx context.Context, provider meetingbot.Provider, userID string, scopes []string) (string, error) {
	if a.providers[provider] == nil {
		return "", fmt.Errorf("connect: %s is not set up", provider)
	}
	if a.cfg.ReadOnly {
		return "", errReadOnly
	}
	now := a.now()
	if _, err := a.cfg.Store.PruneOAuthStates(ctx, now.Add(-time.Hour)); err != nil {
		a.log.Warn("cannot prune the flows' old steps", "err", err)
	}
	ticket := rand.Text()
	err := a.cfg.Store.PutOAuthState(ctx, meetingbot.OAuthState{
		ID: hash(ticket), Step: meetingbot.OAuthLink, Provider: provider, UserID: userID, ExpiresAt: now.Add(LinkTTL),
		Scopes: sortedScopes(scopes),
	})
	if err != nil {
		return "", fmt.Errorf("connect: link: %w", err)
	}
	return a.cfg.PublicURL + StartPath(provider) + "?t=" + ticket, nil
}

// Connection returns userID's connection to provider, and whether there is
// one (active or broken). Its Token is sealed.
func (a *Accounts) Connection(ctx context.Context, provider meetingbot.Provider, userID string) (meetingbot.Connection, bool, error) {
	return a.cfg.Store.Connection(ctx, provider, userID)
}

// Disconnect revokes userID's grant of provider, after Config.Disconnecting
// has stopped what was opened with it, and deletes the connection. It
// reports whether there was one. A revocation the provider refuses (the
// grant was revoked already) is logged; the connection goes all the same.
func (a *Accounts) Disconnect(ctx context.Context, provider meetingbot.Provider, userID string) (meetingbot.Connection, bool, error) {
	p := a.providers[provider]
	if a.cfg.ReadOnly {
		return meetingbot.Connection{}, false, errReadOnly
	}
	c, ok, err := a.cfg.Store.Connection(ctx, provider, userID)
	if err != nil || !ok {
		return c, false, err
	}
	if c.State == meetingbot.ConnectionActive {
		a.tell(ctx, c, func(h Hooks) func(context.Context, meetingbot.Connection) { return h.Disconnecting })
	}
	if p != nil {
		a.revokeConnection(ctx, p, c)
	}
	if _, err := a.cfg.Store.DeleteConnection(ctx, provider, userID); err != nil {
		return c, false, fmt.Errorf("connect: disconnect: %w", err)
	}
	a.drop(c)
	a.log.Info("disconnected", "provider", provider, "user", userID, "account", c.Account)
	return c, true, nil
}

// revokeConnection revokes c's grant at its provider, best effort, with a
// live token: an access token past its expiry (Slack's rotated ones last
// 12 hours) is refreshed first, and a revocation refused is tried once
// more with a token refreshed then, or the refresh token would stay live
// at the provider once the connection is deleted.
func (a *Accounts) revokeConnection(ctx context.Context, p Provider, c meetingbot.Connection) {
	log := a.log.With("provider", c.Provider, "user", c.UserID)
	src := a.sourceOf(p, c)
	tok, err := src.Token()
	if err != nil {
		// Broken or unreadable: the sealed token is all there is.
		if tok, err = a.open(ctx, c); err != nil {
			log.Warn("cannot read the token to revoke it", "err", err)
			return
		}
	}
	err = p.Revoke(a.client(ctx), tok)
	if err != nil && c.State == meetingbot.ConnectionActive {
		src.mu.Lock()
		src.refused = tok.AccessToken
		src.mu.Unlock()
		if fresh, ferr := src.Token(); ferr == nil && fresh.AccessToken != tok.AccessToken {
			err = p.Revoke(a.client(ctx), fresh)
		}
	}
	if err != nil {
		log.Info("revocation refused; the connection is deleted all the same", "err", err)
	}
}

// client returns ctx carrying the HTTP client of token requests.
func (a *Accounts) client(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, a.http)
}

// sealContext binds a connection's sealed token to its row.
func sealContext(provider meetingbot.Provider, userID string) string {
	return "token:" + string(provider) + ":" + userID
}

// seal seals tok for c's row.
func (a *Accounts) seal(c meetingbot.Connection, tok *oauth2.Token) ([]byte, error) {
	b, err := json.Marshal(tok)
	if err != nil {
		return nil, err
	}
	return a.cfg.Keyring.Seal(b, sealContext(c.Provider, c.UserID)), nil
}

// open opens c's token; one sealed under an old key is sealed again
// under the first and stored.
func (a *Accounts) open(ctx context.Context, c meetingbot.Connection) (*oauth2.Token, error) {
	tok, _, err := a.openReseal(ctx, c)
	return tok, err
}

// openReseal is open, reporting whether it stored c's token sealed again
// under the first key: false when it was sealed under the first already,
// the Accounts are ReadOnly, or the token changed in the store since c
// was read (a refresh or a reconnection, sealed under the first key).
func (a *Accounts) openReseal(ctx context.Context, c meetingbot.Connection) (*oauth2.Token, bool, error) {
	b, stale, err := a.cfg.Keyring.Open(c.Token, sealContext(c.Provider, c.UserID))
	if err != nil {
		return nil, false, err
	}
	var tok oauth2.Token
	if err := json.Unmarshal(b, &tok); err != nil {
		return nil, false, fmt.Errorf("connect: token of %s/%s: %w", c.Provider, c.UserID, err)
	}
	if !stale || a.cfg.ReadOnly {
		return &tok, false, nil
	}
	sealed := c.Token
	c.Token = a.cfg.Keyring.Seal(b, sealContext(c.Provider, c.UserID))
	resealed, err := a.cfg.Store.ResealConnection(ctx, c, sealed)
	if err != nil {
		a.log.Warn("cannot reseal a token under the first key", "provider", c.Provider, "user", c.UserID, "err", err)
	}
	return &tok, resealed, nil
}

// Readable is what CheckKeys found.
type Readable struct {
	// Connections is how many are stored, Unreadable how many no key of
	// TOKEN_ENCRYPTION_KEY opens, Resealed how many were sealed again
	// under the first key, and Stale how many are sealed under another
	// key still (ReadOnly Accounts reseal none).
	Connections, Unreadable, Resealed, Stale int
}

// CheckKeys opens every stored token, active or broken, sealing again
// under the first key those sealed under another, and says how many none
// of the keys opens: the start-up check of TOKEN_ENCRYPTION_KEY. A token
// it opened but could not store again (the store failed, or another
// replica changed it meanwhile) counts as Stale, not Resealed.
func (a *Accounts) CheckKeys(ctx context.Context) (Readable, error) {
	cs, err := a.cfg.Store.Connections(ctx)
	if err != nil {
		return Readable{}, fmt.Errorf("connect: check keys: %w", err)
	}
	r := Readable{Connections: len(cs)}
	for _, c := range cs {
		_, stale, err := a.cfg.Keyring.Open(c.Token, sealContext(c.Provider, c.UserID))
		switch {
		case err != nil:
			r.Unreadable++
		case !stale:
		default:
			if _, resealed, _ := a.openReseal(ctx, c); resealed {
				r.Resealed++
			} else {
				r.Stale++
			}
		}
	}
	return r, nil
}

// CheckKeysAndSay checks the stored tokens against TOKEN_ENCRYPTION_KEY at
// start-up (CheckKeys) and logs what it found: tokens no key opens at
// ERROR with the fix, tokens sealed again or to be sealed again at INFO.
func (a *Accounts) CheckKeysAndSay(ctx context.Context) {
	r, err := a.CheckKeys(ctx)
	switch {
	case err != nil:
		a.log.Warn("cannot check the stored tokens against TOKEN_ENCRYPTION_KEY", "err", err)
	case r.Unreadable > 0:
		a.log.Error(fmt.Sprintf("TOKEN_ENCRYPTION_KEY cannot decrypt %d of the %d stored connections: put the key they were sealed with back in TOKEN_ENCRYPTION_KEY, after the new one (e.g. TOKEN_ENCRYPTION_KEY=<new>,<old>), and restart; meanwhile each of them stops when the bot needs its token, and its person is asked to reconnect (one DM), their reminders read with the service account where it can, else paused", r.Unreadable, r.Connections),
			"unreadable", r.Unreadable, "connections", r.Connections)
	case r.Resealed > 0:
		a.log.Info("connections sealed under an old key were sealed again under the first key of TOKEN_ENCRYPTION_KEY", "resealed", r.Resealed, "connections", r.Connections)
	case r.Stale > 0:
		a.log.Info("connections sealed under an old key of TOKEN_ENCRYPTION_KEY: the bot seals them again under the first at its start", "stale", r.Stale, "connections", r.Connections)
	}
}

// Counts returns how many connections of each provider are in each state,
// for the meetingbot_connections gauge.
func (a *Accounts) Counts(ctx context.Context) (map[meetingbot.Provider]map[meetingbot.ConnectionState]int, error) {
	cs, err := a.cfg.Store.Connections(ctx)
	if err != nil {
		return nil, err
	}
	out := map[meetingbot.Provider]map[meetingbot.ConnectionState]int{}
	for p := range a.providers {
		out[p] = map[meetingbot.ConnectionState]int{meetingbot.ConnectionActive: 0, meetingbot.ConnectionBroken: 0}
	}
	for _, c := range cs {
		if out[c.Provider] == nil {
			out[c.Provider] = map[meetingbot.ConnectionState]int{}
		}
		out[c.Provider][c.State]++
	}
	return out, nil
}

// name names a connection in the caches: it changes when it is made again.
func name(c meetingbot.Connection) string {
	return string(c.Provider) + ":" + c.UserID + ":" + strconv.FormatInt(c.CreatedAt.UnixMilli(), 10)
}

// drop forgets what the caches hold of c.
func (a *Accounts) drop(c meetingbot.Connection) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.sources, name(c))
	for k, l := range a.found {
		if l.c == nil || (l.c.Provider == c.Provider && l.c.UserID == c.UserID) || strings.EqualFold(k, c.Account) {
			delete(a.found, k)
		}
	}
}
