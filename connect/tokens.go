package connect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/keyring"
)

// lookupTTL is how long a calendar's connection, or the lack of one, is
// taken from memory before the store is asked again: a connection made or
// removed on another replica is seen within it. This replica's own
// changes are seen at once.
const lookupTTL = 30 * time.Second

// refreshTimeout bounds one token refresh.
const refreshTimeout = 30 * time.Second

// revoked and refused are the reasons a connection stopped, as its
// person is told.
func revoked(p Provider) string {
	if p.Name() == meetingbot.ProviderSlack {
		return "Slack stopped accepting the access you gave: it was revoked (from your Slack account or by an admin) or it expired"
	}
	return "Google stopped accepting the access you gave: it was revoked (from your Google account or by an admin) or it expired"
}

func refused(p Provider) string { return p.Title() + " refused the token even after a refresh" }

// unreadable is the reason a connection stopped when no key of
// TOKEN_ENCRYPTION_KEY opens its token, as its person is told.
const unreadable = "I can no longer read the access you gave: the key it is kept under changed on the bot"

// keyFix says what the operator does about a token no key opens.
const keyFix = "TOKEN_ENCRYPTION_KEY has no key that decrypts its token: put the key it was sealed with back after the first (TOKEN_ENCRYPTION_KEY=<new>,<old>) and restart, or its person reconnects (they were told)"

// Account returns the token source of the Google account user connected,
// when it is the one whose own calendar calendarID is (its email), and the
// name of the connection, which changes when the person connects again.
// The source refreshes through the oauth2 library and stores what changed;
// replicas share the token through the store. An error matching
// meetingbot.ErrNotConnected means no connection of user's is in use for
// calendarID: read it another way. A person's token reads only for them:
// anyone else's reading of their calendar is ErrNotConnected.
func (a *Accounts) Account(ctx context.Context, user, calendarID string) (oauth2.TokenSource, string, error) {
	p := a.providers[meetingbot.ProviderGoogle]
	c, err := a.active(ctx, calendarID)
	if err != nil {
		return nil, "", err
	}
	if c.UserID != user {
		return nil, "", meetingbot.ErrNotConnected
	}
	n := name(*c)
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sources[n]
	if s == nil {
		s = &source{a: a, p: p, provider: c.Provider, user: c.UserID, created: c.CreatedAt}
		a.sources[n] = s
	}
	return s, n, nil
}

// Owner returns the Slack user whose connected Google account calendarID
// is, ErrNotConnected when no connection of it is in use.
func (a *Accounts) Owner(ctx context.Context, calendarID string) (string, error) {
	c, err := a.active(ctx, calendarID)
	if err != nil {
		return "", err
	}
	return c.UserID, nil
}

// active returns the connection in use of the Google account whose own
// calendar calendarID is, looked up at most once a lookupTTL.
func (a *Accounts) active(ctx context.Context, calendarID string) (*meetingbot.Connection, error) {
	if a.providers[meetingbot.ProviderGoogle] == nil {
		return nil, meetingbot.ErrNotConnected
	}
	account := strings.ToLower(calendarID)
	a.mu.Lock()
	l, ok := a.found[account]
	a.mu.Unlock()
	if !ok || a.now().Sub(l.at) >= lookupTTL {
		c, found, err := a.cfg.Store.ConnectionOf(ctx, meetingbot.ProviderGoogle, account)
		if err != nil {
			return nil, fmt.Errorf("connect: connection of %s: %w", calendarID, err)
		}
		l = lookup{at: a.now()}
		if found && c.State == meetingbot.ConnectionActive {
			l.c = &c
		}
		a.mu.Lock()
		a.found[account] = l
		a.mu.Unlock()
	}
	if l.c == nil {
		return nil, meetingbot.ErrNotConnected
	}
	return l.c, nil
}

// Refused stops the connection named connection (Account's name): the API
// refused its token after a refresh (401). Its person is told once.
func (a *Accounts) Refused(ctx context.Context, connection string, err error) {
	a.mu.Lock()
	s := a.sources[connection]
	a.mu.Unlock()
	if s == nil || a.cfg.ReadOnly {
		return
	}
	c, ok, lerr := a.cfg.Store.Connection(ctx, s.provider, s.user)
	if lerr != nil || !ok || !c.CreatedAt.Equal(s.created) {
		return
	}
	a.log.Warn("the API refused a connection's fresh token: it is stopped", "provider", c.Provider, "user", c.UserID, "account", c.Account, "err", err)
	a.breakConnection(ctx, c, refused(s.p))
}

// breakConnection marks c broken; the one replica that did tells the
// person.
func (a *Accounts) breakConnection(ctx context.Context, c meetingbot.Connection, reason string) {
	a.drop(c)
	broke, err := a.cfg.Store.BreakConnection(ctx, c, reason, a.now())
	if err != nil {
		a.log.Error("cannot mark a connection broken", "provider", c.Provider, "user", c.UserID, "err", err)
		return
	}
	if broke {
		a.log.Warn("connection stopped: its person is asked to reconnect", "provider", c.Provider, "user", c.UserID, "account", c.Account, "reason", reason)
		c.State, c.Reason = meetingbot.ConnectionBroken, reason
		a.tell(ctx, c, func(h Hooks) func(context.Context, meetingbot.Connection) { return h.Broken })
		a.Count(ctx)
	}
}

// source is the token source of one connection, shared by every client
// that reads with it.
type source struct {
	a        *Accounts
	p        Provider
	provider meetingbot.Provider
	user     string
	created  time.Time

	mu sync.Mutex
	// handed is the access token last handed out, and refused the one a
	// caller found refused (Renew): it is refreshed, not handed out again.
	handed, refused string
	// mem is, for ReadOnly Accounts, the token refreshed from the sealed
	// token memOf, kept in memory only.
	mem   *oauth2.Token
	memOf []byte
}

// expiryDelta is how long before its expiry a token is refreshed: Slack's
// provider refreshes a minute early, and a token handed out must outlive
// the call made with it.
const expiryDelta = time.Minute

// Refresh races: a refresh token that works once (Slack's, with token
// rotation) fails with invalid_grant for every replica but the first to
// use it; the others find the first's new token in the store, where it
// lands moments after the provider issued it.
const (
	raceWait = 2 * time.Second
	racePoll = 100 * time.Millisecond
)

// notConnected is the error of a read for a connection no longer in use:
// permanent, and matching meetingbot.ErrNotConnected (and cause, if any).
func notConnected(why string, cause error) error {
	if cause != nil {
		return meetingbot.Permanent(fmt.Errorf("connect: %s: %w: %w", why, meetingbot.ErrNotConnected, cause))
	}
	return meetingbot.Permanent(fmt.Errorf("connect: %s: %w", why, meetingbot.ErrNotConnected))
}

// valid reports whether tok may be handed out at now: it has an access
// token that does not expire within expiryDelta.
func valid(tok *oauth2.Token, now time.Time) bool {
	return tok.AccessToken != "" && (tok.Expiry.IsZero() || now.Add(expiryDelta).Before(tok.Expiry))
}

// Token returns the connection's access token: the stored one while it is
// valid and not refused (another replica's refresh included), else a
// refreshed one, stored sealed. A refresh refused with invalid_grant stops
// the connection, unless another replica refreshed it meanwhile (a
// rotating refresh token works once): its token is used.
func (s *source) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	a := s.a
	c, tok, err := s.stored(ctx)
	if err != nil {
		return nil, err
	}
	if valid(tok, a.now()) && tok.AccessToken != s.refused {
		s.handed = tok.AccessToken
		return tok, nil
	}
	if a.cfg.ReadOnly && s.provider == meetingbot.ProviderSlack {
		return nil, fmt.Errorf("connect: token of %s: %w: a Slack refresh token works once, so only the bot refreshes it", s.user, errReadOnly)
	}
	stale := *tok
	stale.Expiry = time.Unix(1, 0) // make the library refresh
	fresh, err := s.p.TokenSource(a.client(ctx), &stale).Token()
	var rerr *oauth2.RetrieveError
	switch {
	case errors.As(err, &rerr) && rerr.ErrorCode == "invalid_grant":
		if other, ok := s.refreshedMeanwhile(ctx, c); ok {
			s.handed = other.AccessToken
			return other, nil
		}
		if !a.cfg.ReadOnly {
			a.breakConnection(ctx, c, revoked(s.p))
		}
		return nil, notConnected("refresh refused", err)
	case err != nil:
		return nil, err // transient, or the caller's to explain
	}
	if fresh.RefreshToken == "" {
		fresh.RefreshToken = tok.RefreshToken
	}
	s.handed, s.refused = fresh.AccessToken, ""
	if a.cfg.ReadOnly {
		s.mem, s.memOf = fresh, c.Token
		return fresh, nil
	}
	if sealed, err := a.seal(c, fresh); err == nil {
		c.Token, c.UpdatedAt = sealed, a.now()
		if _, err := a.cfg.Store.SetConnectionToken(ctx, c); err != nil {
			a.log.Warn("cannot store a refreshed token; it is refreshed again next time", "provider", c.Provider, "user", c.UserID, "err", err)
		}
	}
	return fresh, nil
}

// stored reads the connection and opens its token (for ReadOnly Accounts,
// the one refreshed in memory from it, if any). A token no key opens
// stops the connection.
func (s *source) stored(ctx context.Context) (meetingbot.Connection, *oauth2.Token, error) {
	a := s.a
	c, ok, err := a.cfg.Store.Connection(ctx, s.provider, s.user)
	switch {
	case err != nil:
		return c, nil, fmt.Errorf("connect: token of %s: %w", s.user, err)
	case !ok || !c.CreatedAt.Equal(s.created):
		a.drop(meetingbot.Connection{Provider: s.provider, UserID: s.user, CreatedAt: s.created})
		return c, nil, notConnected("disconnected", nil)
	case c.State != meetingbot.ConnectionActive:
		a.drop(c)
		return c, nil, notConnected("connection stopped", nil)
	}
	tok, err := a.open(ctx, c)
	switch {
	case errors.Is(err, keyring.ErrUnreadable):
		// No key opens it: as good as revoked until the operator puts
		// the key back, so the connection stops, its person is told,
		// and its calendar is read as if it had none.
		if !a.cfg.ReadOnly {
			a.breakConnection(ctx, c, unreadable)
		}
		return c, nil, notConnected(fmt.Sprintf("token of %s/%s: %s", s.provider, s.user, keyFix), err)
	case err != nil:
		return c, nil, meetingbot.Permanent(fmt.Errorf("connect: token of %s: %w", s.user, err))
	}
	if a.cfg.ReadOnly && s.mem != nil && bytes.Equal(s.memOf, c.Token) {
		tok = s.mem
	}
	return c, tok, nil
}

// refreshedMeanwhile looks in the store, for up to raceWait, for the
// token another replica refreshed from the one c holds, and returns it
// when it is valid.
func (s *source) refreshedMeanwhile(ctx context.Context, c meetingbot.Connection) (*oauth2.Token, bool) {
	deadline := time.Now().Add(raceWait)
	for {
		now, ok, err := s.a.cfg.Store.Connection(ctx, s.provider, s.user)
		if err == nil && ok && now.State == meetingbot.ConnectionActive && now.CreatedAt.Equal(c.CreatedAt) && !bytes.Equal(now.Token, c.Token) {
			if tok, err := s.a.open(ctx, now); err == nil && valid(tok, s.a.now()) {
				s.a.log.Info("a refresh token was used by another replica first: its refreshed token is used", "provider", c.Provider, "user", c.UserID)
				return tok, true
			}
		}
		if err != nil || !ok || now.State != meetingbot.ConnectionActive || !time.Now().Before(deadline) {
			return nil, false
		}
		t := time.NewTimer(racePoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, false
		case <-t.C:
		}
	}
}

// Renew says the API refused the access token the connection named
// connection last handed out (401): the next Token refreshes it, unless
// another replica did already.
func (a *Accounts) Renew(connection string) {
	a.mu.Lock()
	s := a.sources[connection]
	a.mu.Unlock()
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refused = s.handed
}

// UserToken returns the token source of userID's connection to provider
// (a Slack user token, for status) and the connection's name. An error
// matching meetingbot.ErrNotConnected means none is in use.
func (a *Accounts) UserToken(ctx context.Context, provider meetingbot.Provider, userID string) (oauth2.TokenSource, string, error) {
	p := a.providers[provider]
	if p == nil {
		return nil, "", meetingbot.ErrNotConnected
	}
	c, ok, err := a.cfg.Store.Connection(ctx, provider, userID)
	switch {
	case err != nil:
		return nil, "", fmt.Errorf("connect: connection of %s: %w", userID, err)
	case !ok || c.State != meetingbot.ConnectionActive:
		return nil, "", meetingbot.ErrNotConnected
	}
	return a.sourceOf(p, c), name(c), nil
}

// sourceOf returns the token source of c, one per connection in this
// process, so that its refreshes are one at a time.
func (a *Accounts) sourceOf(p Provider, c meetingbot.Connection) *source {
	n := name(c)
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sources[n]
	if s == nil {
		s = &source{a: a, p: p, provider: c.Provider, user: c.UserID, created: c.CreatedAt}
		a.sources[n] = s
	}
	return s
}

// Forget deletes userID's connection to provider without revoking it: the
// provider said it was revoked already (Slack's tokens_revoked). It
// reports whether there was one.
func (a *Accounts) Forget(ctx context.Context, provider meetingbot.Provider, userID string) (bool, error) {
	if a.cfg.ReadOnly {
		return false, errReadOnly
	}
	c, ok, err := a.cfg.Store.Connection(ctx, provider, userID)
	if err != nil || !ok {
		return false, err
	}
	if _, err := a.cfg.Store.DeleteConnection(ctx, provider, userID); err != nil {
		return false, fmt.Errorf("connect: forget: %w", err)
	}
	a.drop(c)
	a.log.Info("connection revoked at the provider: deleted", "provider", provider, "user", userID)
	return true, nil
}

// ForgetAll deletes every connection to provider without revoking them:
// the app was uninstalled, which revoked them all. It returns how many.
func (a *Accounts) ForgetAll(ctx context.Context, provider meetingbot.Provider) (int, error) {
	cs, err := a.cfg.Store.Connections(ctx)
	if err != nil {
		return 0, fmt.Errorf("connect: forget all: %w", err)
	}
	n := 0
	for _, c := range cs {
		if c.Provider != provider {
			continue
		}
		if ok, err := a.Forget(ctx, provider, c.UserID); err != nil {
			return n, err
		} else if ok {
			n++
		}
	}
	return n, nil
}

// Stop stops userID's connection to provider: the provider refused its
// token where it is used (Slack's token_revoked on users.profile.set). Its
// person is told once.
func (a *Accounts) Stop(ctx context.Context, provider meetingbot.Provider, userID string) {
	p := a.providers[provider]
	if p == nil || a.cfg.ReadOnly {
		return
	}
	c, ok, err := a.cfg.Store.Connection(ctx, provider, userID)
	if err != nil || !ok || c.State != meetingbot.ConnectionActive {
		return
	}
	a.breakConnection(ctx, c, revoked(p))
}
