package connect

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/meetingbot/meetingbot"
)

// Google's scopes a connection asks for: who the person is (openid email,
// for the ID token's email claim) and the narrowest scope that reads the
// events of their calendar and watches them (events.list, events.get,
// events.watch accept it).
const (
	ScopeEvents = "https://www.googleapis.com/auth/calendar.events.readonly"
	scopeOpenID = "openid"
	scopeEmail  = "email"
)

// GoogleClient is an OAuth client of type Web application, as
// GOOGLE_OAUTH_CLIENT_JSON holds it. AuthURI and TokenURI are used as
// given.
type GoogleClient struct {
	ID, Secret        string
	AuthURI, TokenURI string
}

// GoogleConfig configures the Google provider.
type GoogleConfig struct {
	Client GoogleClient
	// RedirectURI is PUBLIC_URL/google/oauth/callback.
	RedirectURI string
	// Email returns a Slack user's profile email: the Google account they
	// must connect.
	Email func(ctx context.Context, userID string) (string, error)
	// Scopes are asked for beside openid, email and ScopeEvents: another
	// feature's (RSVP's calendar.events), granted incrementally.
	Scopes []string
	Now    func() time.Time
}

// Google is the Provider of people's Google accounts, with the web-server
// flow of "Using OAuth 2.0 for Web Server Applications"
// (https://developers.google.com/identity/protocols/oauth2/web-server).
type Google struct {
	oauth  *oauth2.Config
	email  func(ctx context.Context, userID string) (string, error)
	revoke string
	now    func() time.Time
}

// NewGoogle returns the Google provider.
func NewGoogle(cfg GoogleConfig) (*Google, error) {
	if cfg.Client.ID == "" || cfg.Client.Secret == "" || cfg.Client.AuthURI == "" || cfg.Client.TokenURI == "" {
		return nil, errors.New("connect: the Google client needs client_id, client_secret, auth_uri and token_uri")
	}
	if cfg.Email == nil {
		return nil, errors.New("connect: Google needs the Slack profile email lookup")
	}
	revoke, err := revokeURL(cfg.Client.TokenURI)
	if err != nil {
		return nil, err
	}
	g := &Google{
		oauth: &oauth2.Config{
			ClientID: cfg.Client.ID, ClientSecret: cfg.Client.Secret, RedirectURL: cfg.RedirectURI,
			Endpoint: oauth2.Endpoint{AuthURL: cfg.Client.AuthURI, TokenURL: cfg.Client.TokenURI, AuthStyle: oauth2.AuthStyleInParams},
			Scopes:   sortedScopes(append([]string{scopeOpenID, scopeEmail, ScopeEvents}, cfg.Scopes...)),
		},
		email:  cfg.Email,
		revoke: revoke,
		now:    cfg.Now,
	}
	if g.now == nil {
		g.now = time.Now
	}
	return g, nil
}

// revokeURL is tokenURI with its last path element replaced by "revoke":
// https://oauth2.googleapis.com/token gives https://oauth2.googleapis.com/revoke.
func revokeURL(tokenURI string) (string, error) {
	u, err := url.Parse(tokenURI)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("connect: token_uri %q is not a URL", tokenURI)
	}
	u.Path = path.Join(path.Dir(u.Path), "revoke")
	u.RawQuery = ""
	return u.String(), nil
}

func (g *Google) Name() meetingbot.Provider { return meetingbot.ProviderGoogle }
func (g *Google) Title() string             { return "Google Calendar" }

// AuthCodeURL asks for offline access (a refresh token), the scopes
// granted before too (include_granted_scopes, "Incremental
// authorization"), consent every time (so a refresh token comes back on a
// reconnection too), PKCE S256, and hint as the account. scopes are asked
// for beside the provider's own: "request access to scopes only when
// they are needed", the others staying granted (web-server guide,
// "Incremental authorization").
func (g *Google) AuthCodeURL(state, verifier, hint string, scopes []string) string {
	opts := []oauth2.AuthCodeOption{
		oauth2.AccessTypeOffline, oauth2.S256ChallengeOption(verifier),
		oauth2.SetAuthURLParam("include_granted_scopes", "true"),
		oauth2.SetAuthURLParam("prompt", "consent"),
	}
	if hint != "" {
		opts = append(opts, oauth2.SetAuthURLParam("login_hint", hint))
	}
	if len(scopes) > 0 {
		cfg := *g.oauth
		cfg.Scopes = sortedScopes(append(slices.Clone(g.oauth.Scopes), scopes...))
		return cfg.AuthCodeURL(state, opts...)
	}
	return g.oauth.AuthCodeURL(state, opts...)
}

// Exchange trades the code for tokens and reads the account from the ID
// token's email claim. OpenID Connect lets a client that gets the ID
// token straight from the token endpoint over TLS take TLS's check of the
// issuer in place of the signature (OpenID Connect Core 1.0, 3.1.3.7,
// item 6); its audience, expiry and verified email are still checked. A
// grant without the events scope (the person unticked it) or without a
// refresh token is refused.
func (g *Google) Exchange(ctx context.Context, code, verifier string) (Grant, error) {
	tok, err := g.oauth.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		return Grant{}, err
	}
	grant := Grant{Token: tok, Scopes: strings.Fields(fmt.Sprint(tok.Extra("scope")))}
	idToken, _ := tok.Extra("id_token").(string)
	claims, err := idClaims(idToken)
	// A token endpoint that answers what it should not is Google's fault
	// (502); what the person chose or can change is theirs (403).
	switch {
	case err != nil:
		return grant, &Refusal{Status: http.StatusBadGateway, What: "Google gave no readable ID token, so I cannot tell which account you signed in with; nothing was stored.", Fix: "Try again in a minute."}
	case !claims.audience(g.oauth.ClientID) || !g.now().Before(time.Unix(claims.Exp, 0)):
		return grant, &Refusal{Status: http.StatusBadGateway, What: "Google's ID token was not for this bot, or had expired; nothing was stored.", Fix: "Try again in a minute."}
	case claims.Email == "" || !claims.verified():
		return grant, &Refusal{Status: http.StatusForbidden, What: "Google did not give me a verified email for the account, so nothing was stored.", Fix: "Sign in with your work Google account."}
	}
	grant.Account = strings.ToLower(claims.Email)
	switch {
	case !slices.Contains(grant.Scopes, ScopeEvents):
		return grant, &Refusal{Status: http.StatusForbidden, What: "You did not allow me to see your calendar's events, so nothing was stored.", Fix: "Start again and leave the calendar permission ticked on Google's page."}
	case tok.RefreshToken == "":
		// Google keeps an earlier grant's refresh token to itself: the
		// person removes the app's access and starts again.
		return grant, &Refusal{Status: http.StatusForbidden, What: "Google gave no lasting access (no refresh token), so nothing was stored.", Fix: "Remove meetingbot from your Google account's third-party access (myaccount.google.com > Security > Your connections to third-party apps) and start again."}
	}
	return grant, nil
}

// Expect returns the Slack profile email of userID, lower case.
func (g *Google) Expect(ctx context.Context, userID string) (string, error) {
	email, err := g.email(ctx, userID)
	if err != nil {
		return "", err
	}
	if email == "" {
		return "", errors.New("the Slack profile has no email")
	}
	return strings.ToLower(email), nil
}

// Revoke revokes the grant at the revoke endpoint, POST token= (form
// encoded), as "Revoking a token" says: a refresh token's revocation ends
// its access tokens too.
func (g *Google) Revoke(ctx context.Context, tok *oauth2.Token) error {
	t := tok.RefreshToken
	if t == "" {
		t = tok.AccessToken
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.revoke, strings.NewReader(url.Values{"token": {t}}.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	client := http.DefaultClient
	if c, ok := ctx.Value(oauth2.HTTPClient).(*http.Client); ok && c != nil {
		client = c
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("revoke: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var body struct {
			Error string `json:"error"`
		}
		json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&body)
		return fmt.Errorf("revoke: HTTP %d %s", resp.StatusCode, body.Error)
	}
	return nil
}

// TokenSource refreshes tok through the token endpoint.
func (g *Google) TokenSource(ctx context.Context, tok *oauth2.Token) oauth2.TokenSource {
	return g.oauth.TokenSource(ctx, tok)
}

// claims are the ID token's claims the connection reads.
type claims struct {
	Aud           json.RawMessage `json:"aud"`
	Exp           int64           `json:"exp"`
	Email         string          `json:"email"`
	EmailVerified any             `json:"email_verified"`
}

// idClaims reads a JWT's payload, without checking its signature (see
// Exchange).
func idClaims(idToken string) (claims, error) {
	var c claims
	parts := strings.Split(idToken, ".")
	if len(parts) != 3 {
		return c, errors.New("not a JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return c, err
	}
	return c, json.Unmarshal(b, &c)
}

// audience reports whether the token is for clientID: aud is a string or
// an array of them.
func (c claims) audience(clientID string) bool {
	var one string
	if json.Unmarshal(c.Aud, &one) == nil {
		return one == clientID
	}
	var many []string
	return json.Unmarshal(c.Aud, &many) == nil && slices.Contains(many, clientID)
}

// verified reads email_verified, a boolean or (in older tokens) a string.
func (c claims) verified() bool {
	switch v := c.EmailVerified.(type) {
	case bool:
		return v
	case string:
		return v == "true"
	}
	return false
}
