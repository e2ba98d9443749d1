package calendartest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

const redirectURI = "https://bot.example.com/google/oauth/callback"

// webConfig is the oauth2 configuration of the server's web client.
func webConfig(t *testing.T, srv *calendartest.Server) *oauth2.Config {
	t.Helper()
	var file struct {
		Web struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
			AuthURI      string `json:"auth_uri"`
			TokenURI     string `json:"token_uri"`
		} `json:"web"`
	}
	if err := json.Unmarshal(srv.OAuthClientJSON(redirectURI), &file); err != nil {
		t.Fatal(err)
	}
	return &oauth2.Config{
		ClientID: file.Web.ClientID, ClientSecret: file.Web.ClientSecret, RedirectURL: redirectURI,
		Endpoint: oauth2.Endpoint{AuthURL: file.Web.AuthURI, TokenURL: file.Web.TokenURI},
		Scopes:   []string{"openid", "email", calendar.CalendarEventsReadonlyScope},
	}
}

// consent opens the consent page as a browser would and returns where
// Google sends it back.
func consent(t *testing.T, authURL string) url.Values {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("GET %s: %s, want 302", authURL, resp.Status)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), redirectURI+"?") {
		t.Fatalf("redirected to %q, want %s?…", resp.Header.Get("Location"), redirectURI)
	}
	return loc.Query()
}

func claims(t *testing.T, idToken string) map[string]any {
	t.Helper()
	parts := strings.Split(idToken, ".")
	if len(parts) != 3 {
		t.Fatalf("id_token %q is not a JWT", idToken)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// The whole web-server flow with the oauth2 library: consent, the
// exchange with PKCE, the ID token's email, a person's token reading
// their own calendar only, refresh, and revocation.
func TestWebServerFlow(t *testing.T) {
	srv := calendartest.NewServer()
	defer srv.Close()
	ctx := context.WithValue(t.Context(), oauth2.HTTPClient, srv.Client())
	cfg := webConfig(t, srv)
	srv.AddCalendar("alice@example.com")
	srv.AddCalendar("bob@example.com")

	verifier := oauth2.GenerateVerifier()
	back := consent(t, cfg.AuthCodeURL("state-1", oauth2.AccessTypeOffline, oauth2.S256ChallengeOption(verifier),
		oauth2.SetAuthURLParam("include_granted_scopes", "true"), oauth2.SetAuthURLParam("login_hint", "alice@example.com")))
	if back.Get("state") != "state-1" || back.Get("code") == "" {
		t.Fatalf("consent came back with %v, want state-1 and a code", back)
	}
	if _, err := cfg.Exchange(ctx, back.Get("code"), oauth2.VerifierOption(oauth2.GenerateVerifier())); !isOAuthError(err, "invalid_grant") {
		t.Errorf("Exchange with another verifier: err = %v, want invalid_grant", err)
	}
	back = consent(t, cfg.AuthCodeURL("state-2", oauth2.AccessTypeOffline, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("login_hint", "alice@example.com")))
	tok, err := cfg.Exchange(ctx, back.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("Exchange: %v", err)
	}
	if _, err := cfg.Exchange(ctx, back.Get("code"), oauth2.VerifierOption(verifier)); !isOAuthError(err, "invalid_grant") {
		t.Errorf("Exchange of a code used already: err = %v, want invalid_grant", err)
	}
	if tok.RefreshToken == "" {
		t.Errorf("Exchange with access_type=offline gave no refresh token")
	}
	idToken, _ := tok.Extra("id_token").(string)
	if c := claims(t, idToken); c["email"] != "alice@example.com" || c["aud"] != cfg.ClientID || c["email_verified"] != true {
		t.Errorf("ID token claims = %v, want email alice@example.com, aud the client, email_verified", c)
	}

	svc, err := calendar.NewService(ctx, option.WithTokenSource(cfg.TokenSource(ctx, tok)), option.WithEndpoint(srv.Endpoint()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Events.List("alice@example.com").Do(); err != nil {
		t.Errorf("alice's token lists alice's calendar: %v", err)
	}
	if _, err := svc.Events.List("bob@example.com").Do(); !isHTTP(err, 404) {
		t.Errorf("alice's token lists bob's calendar: err = %v, want 404", err)
	}

	expired := *tok
	expired.Expiry = time.Now().Add(-time.Hour)
	fresh, err := cfg.TokenSource(ctx, &expired).Token()
	if err != nil || fresh.AccessToken == tok.AccessToken {
		t.Fatalf("refresh: %v, %v; want a new access token", fresh, err)
	}
	srv.RevokeGrants("alice@example.com")
	if _, err := cfg.TokenSource(ctx, &expired).Token(); !isOAuthError(err, "invalid_grant") {
		t.Errorf("refresh after revocation: err = %v, want invalid_grant", err)
	}
	if _, err := svc.Events.List("alice@example.com").Do(); !isHTTP(err, 401) {
		t.Errorf("a revoked access token: err = %v, want 401", err)
	}
}

func TestConsentRefusedAndRevokeEndpoint(t *testing.T) {
	srv := calendartest.NewServer()
	defer srv.Close()
	ctx := context.WithValue(t.Context(), oauth2.HTTPClient, srv.Client())
	cfg := webConfig(t, srv)
	srv.DenyConsent()
	back := consent(t, cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()), oauth2.SetAuthURLParam("login_hint", "alice@example.com")))
	if back.Get("error") != "access_denied" || back.Get("state") != "s" {
		t.Errorf("denied consent came back with %v, want error=access_denied and the state", back)
	}
	other := *cfg
	other.RedirectURL = "https://evil.example.com/cb"
	resp, err := http.Get(other.AuthCodeURL("s"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || resp.Request.URL.Host == "evil.example.com" {
		t.Errorf("an unregistered redirect_uri: %s at %s, want 400 on Google's page", resp.Status, resp.Request.URL)
	}

	srv.SignIn("bob@example.com")
	verifier := oauth2.GenerateVerifier()
	back = consent(t, cfg.AuthCodeURL("s", oauth2.AccessTypeOffline, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("login_hint", "alice@example.com")))
	tok, err := cfg.Exchange(ctx, back.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if c := claims(t, tok.Extra("id_token").(string)); c["email"] != "bob@example.com" {
		t.Errorf("signed in as bob: ID token email %v", c["email"])
	}
	revoke := func(token string) int {
		resp, err := http.PostForm(srv.RevokeURL(), url.Values{"token": {token}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := revoke(tok.RefreshToken); got != 200 {
		t.Errorf("revoke: %d, want 200", got)
	}
	if got := revoke(tok.RefreshToken); got != 400 {
		t.Errorf("revoke twice: %d, want 400", got)
	}
	if n := srv.Grants("bob@example.com"); n != 0 {
		t.Errorf("Grants(bob) after revoke = %d, want 0", n)
	}
}

func isOAuthError(err error, code string) bool {
	var re *oauth2.RetrieveError
	return errors.As(err, &re) && re.ErrorCode == code
}

func isHTTP(err error, code int) bool {
	var gerr *googleapi.Error
	return errors.As(err, &gerr) && gerr.Code == code
}

// PKCE is required (RFC 7636 section 4.4.1 lets a server require it): a
// consent asked without an S256 challenge comes back invalid_request, and
// a code is exchanged only with the verifier of its challenge.
func TestPKCERequired(t *testing.T) {
	srv := calendartest.NewServer()
	defer srv.Close()
	ctx := context.WithValue(t.Context(), oauth2.HTTPClient, srv.Client())
	cfg := webConfig(t, srv)
	hint := oauth2.SetAuthURLParam("login_hint", "alice@example.com")
	verifier := oauth2.GenerateVerifier()
	for _, tt := range []struct {
		name string
		opts []oauth2.AuthCodeOption
	}{
		{"no challenge", []oauth2.AuthCodeOption{hint}},
		{"plain", []oauth2.AuthCodeOption{hint, oauth2.SetAuthURLParam("code_challenge", verifier), oauth2.SetAuthURLParam("code_challenge_method", "plain")}},
	} {
		back := consent(t, cfg.AuthCodeURL("s", tt.opts...))
		if back.Get("error") != "invalid_request" || back.Get("code") != "" {
			t.Errorf("consent with %s came back with %v, want error=invalid_request and no code", tt.name, back)
		}
	}
	for _, tt := range []struct {
		name string
		opts []oauth2.AuthCodeOption
		want string
	}{
		{"no verifier", nil, "invalid_grant"},
		{"another verifier", []oauth2.AuthCodeOption{oauth2.VerifierOption(oauth2.GenerateVerifier())}, "invalid_grant"},
		{"the verifier", []oauth2.AuthCodeOption{oauth2.VerifierOption(verifier)}, ""},
	} {
		back := consent(t, cfg.AuthCodeURL("s", hint, oauth2.S256ChallengeOption(verifier)))
		_, err := cfg.Exchange(ctx, back.Get("code"), tt.opts...)
		if (tt.want == "" && err != nil) || (tt.want != "" && !isOAuthError(err, tt.want)) {
			t.Errorf("Exchange with %s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}

// An account has one grant for a client, whatever the consents that made
// it: revoking the token of one sign-in ends the refresh tokens of the
// others too, as Google's revocation does with include_granted_scopes.
func TestRevokeEndsEveryGrantOfTheAccount(t *testing.T) {
	srv := calendartest.NewServer()
	defer srv.Close()
	ctx := context.WithValue(t.Context(), oauth2.HTTPClient, srv.Client())
	cfg := webConfig(t, srv)
	signIn := func() *oauth2.Token {
		t.Helper()
		verifier := oauth2.GenerateVerifier()
		back := consent(t, cfg.AuthCodeURL("s", oauth2.AccessTypeOffline, oauth2.S256ChallengeOption(verifier),
			oauth2.SetAuthURLParam("login_hint", "bob@example.com"), oauth2.SetAuthURLParam("include_granted_scopes", "true")))
		tok, err := cfg.Exchange(ctx, back.Get("code"), oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	first, second := signIn(), signIn()
	if n := srv.Grants("bob@example.com"); n != 2 {
		t.Fatalf("Grants(bob) after two sign-ins = %d, want 2", n)
	}
	resp, err := http.PostForm(srv.RevokeURL(), url.Values{"token": {second.RefreshToken}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("revoke: %s, want 200", resp.Status)
	}
	first.Expiry = time.Now().Add(-time.Minute) // make it refresh
	if _, err := cfg.TokenSource(ctx, first).Token(); !isOAuthError(err, "invalid_grant") {
		t.Errorf("refreshing the first sign-in's token after the second's revocation: err = %v, want invalid_grant", err)
	}
	if n := srv.Grants("bob@example.com"); n != 0 {
		t.Errorf("Grants(bob) after one revocation = %d, want 0: the account's grant is one", n)
	}
}
