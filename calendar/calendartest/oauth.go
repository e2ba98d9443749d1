package calendartest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// People's own Google accounts, as Google's OAuth 2.0 server lets a web
// application connect them: "Using OAuth 2.0 for Web Server Applications"
// (https://developers.google.com/identity/protocols/oauth2/web-server),
// with OpenID Connect's ID token
// (https://developers.google.com/identity/openid-connect/openid-connect).
//
//   - The authorization endpoint (AuthURL) takes client_id, redirect_uri,
//     response_type=code, scope, state, code_challenge and
//     code_challenge_method (S256), access_type, include_granted_scopes,
//     login_hint and prompt (web-server guide, step 1, "Set authorization
//     parameters"). A redirect_uri the client did not register is answered
//     with Google's own error page, "Error 400: redirect_uri_mismatch",
//     and no redirect. PKCE is required, as RFC 7636 lets a server
//     require it (section 4.4.1: a request without code_challenge gets
//     error=invalid_request): Google's guide lists code_challenge and
//     code_challenge_method as "Recommended" for web servers, and the bot
//     always sends them, so a bot that stopped would fail every test
//     instead of passing them. Only S256 is accepted (section 4.2: a
//     client able to use S256 must). Consent is given at once, as the account chosen
//     with SignIn (else the login_hint); DenyConsent makes the next one
//     refused, redirected with error=access_denied (step 4, "Handle the
//     OAuth 2.0 server response": "An error response:
//     https://oauth2.example.com/auth?error=access_denied"). The code is
//     single use and valid for 10 minutes.
//   - The token endpoint's authorization_code grant (step 5, "Exchange
//     authorization code for refresh and access tokens") checks the client
//     secret, the redirect_uri and the PKCE code_verifier against the
//     challenge (RFC 7636 section 4.6: BASE64URL(SHA256(verifier))), and
//     answers access_token, expires_in (3599), scope, token_type Bearer,
//     id_token, and refresh_token when access_type was offline. A code used
//     twice, expired, or with the wrong verifier is invalid_grant. With
//     include_granted_scopes=true the scope holds what the account granted
//     the client before too ("Incremental authorization").
//   - The ID token is a JWT signed RS256 with iss https://accounts.google.com,
//     aud and azp the client ID, sub, email, email_verified, iat and exp
//     ("An ID token's payload"), when the scopes had openid (and email).
//   - The refresh_token grant ("Refreshing an access token (offline
//     access)") answers a new access token; a revoked grant is invalid_grant
//     "Token has been expired or revoked." (the error Google gives, and the
//     oauth2 library's RetrieveError carries).
//   - The revoke endpoint, POST /revoke with token= (form-encoded), "Revoking
//     a token": revoking a refresh token or an access token revokes the
//     grant, every token of it; an unknown token is 400 invalid_token. An
//     account has one grant for a client, whatever the consents that made
//     it: with include_granted_scopes=true "the new access token also
//     represents any authorizations that the user previously granted"
//     ("Incremental authorization"), and revoking one token "also expires
//     any/all others associated with the same account" (the report behind
//     Significant-Gravitas/AutoGPT#10493, which reverted a revoke on delete
//     for it). So a revocation ends every grant of the token's account.
//
// A person's access token reads only their own calendar (the one whose ID
// is their email) and those shared with them (Share), as Google answers
// 404 notFound for a calendar a user cannot see.

// Paths of the OAuth endpoints under URL().
const (
	authPath   = "/o/oauth2/auth"
	revokePath = "/revoke"
)

// Web client of OAuthClientJSON.
const (
	webClientID     = "123456789012-web.apps.googleusercontent.com"
	webClientSecret = "GOCSPX-test-web-client-secret"
)

// codeLifetime is how long an authorization code may be exchanged.
const codeLifetime = 10 * time.Minute

// oauthState is the server's state of people's grants; Server.mu guards it.
type oauthState struct {
	redirects []string // the web client's registered redirect URIs
	signedIn  string   // the account consenting, "" for the login_hint
	deny      bool     // refuse the next consent
	codes     map[string]*authCode
	grants    map[string]*grant // by refresh token
	// granted are the scopes each account granted the web client, for
	// include_granted_scopes.
	granted map[string][]string
	// personal maps a person's access tokens to their grant.
	personal map[string]*grant
	lifetime time.Duration
	// exchanges and refreshes count the grants of each kind answered.
	exchanges, refreshes, revocations int
}

type authCode struct {
	account, redirect, challenge string
	scopes                       []string
	offline                      bool
	expires                      time.Time
}

type grant struct {
	account string
	refresh string
	scopes  []string
	revoked bool
}

func (o *oauthState) init() {
	if o.codes == nil {
		o.codes, o.grants, o.granted, o.personal = map[string]*authCode{}, map[string]*grant{}, map[string][]string{}, map[string]*grant{}
	}
}

// AuthURL returns the authorization endpoint, the auth_uri of
// OAuthClientJSON.
func (s *Server) AuthURL() string { return s.base + authPath }

// RevokeURL returns the revoke endpoint: TokenURL with its last path
// element replaced by "revoke", as Google's are
// (https://oauth2.googleapis.com/token, https://oauth2.googleapis.com/revoke).
func (s *Server) RevokeURL() string { return s.base + revokePath }

// OAuthClientJSON returns the JSON of an OAuth client of type Web
// application, as Google's console downloads it, whose auth_uri and
// token_uri point at the server and which may redirect to redirectURIs.
func (s *Server) OAuthClientJSON(redirectURIs ...string) []byte {
	s.mu.Lock()
	s.oauth.redirects = append(s.oauth.redirects, redirectURIs...)
	s.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"web": map[string]any{
		"client_id":                   webClientID,
		"project_id":                  "meetingbot-test",
		"auth_uri":                    s.AuthURL(),
		"token_uri":                   s.TokenURL(),
		"auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
		"client_secret":               webClientSecret,
		"redirect_uris":               redirectURIs,
	}})
	return b
}

// SignIn makes account the one who consents on the authorization page, as
// if the browser were signed in to it; "" goes back to the login_hint.
func (s *Server) SignIn(account string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.signedIn = account
}

// DenyConsent makes the next consent refused: the person clicks Cancel.
func (s *Server) DenyConsent() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.deny = true
}

// RevokeGrants revokes every grant of account, as the person removing the
// app from their Google account does: its refresh tokens get invalid_grant
// and its access tokens 401.
func (s *Server) RevokeGrants(account string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.oauth.grants {
		if g.account == account {
			s.revoke(g)
		}
	}
}

// Grants returns how many grants of account are live (not revoked).
func (s *Server) Grants(account string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, g := range s.oauth.grants {
		if g.account == account && !g.revoked {
			n++
		}
	}
	return n
}

// SetTokenLifetime sets the expires_in of the access tokens issued from
// now on; 0 restores Google's 3599 seconds.
func (s *Server) SetTokenLifetime(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.lifetime = d
}

// OAuthCounts returns how many codes were exchanged, refresh tokens
// redeemed and tokens revoked.
func (s *Server) OAuthCounts() (exchanges, refreshes, revocations int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.oauth.exchanges, s.oauth.refreshes, s.oauth.revocations
}

// revoke ends g and its access tokens. s.mu must be held.
func (s *Server) revoke(g *grant) {
	g.revoked = true
	for tok, pg := range s.oauth.personal {
		if pg == g {
			delete(s.oauth.personal, tok)
			delete(s.tokens, tok)
		}
	}
}

// mayRead reports whether principal may read calendarID: one shared with
// it, or, for a person's own token, their own; a calendar never shared is
// readable by the bot's credentials. s.mu must be held.
func (s *Server) mayRead(c *calendarState, calendarID, principal string, personal bool) bool {
	switch {
	case c == nil:
		return false
	case personal:
		return strings.EqualFold(calendarID, principal) || c.readers[principal]
	}
	return len(c.readers) == 0 || c.readers[principal]
}

func (s *Server) serveAuth(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.init()
	redirect := q.Get("redirect_uri")
	if q.Get("client_id") != webClientID {
		authErrorPage(w, "invalid_client", "The OAuth client was not found.")
		return
	}
	if !slices.Contains(s.oauth.redirects, redirect) {
		authErrorPage(w, "redirect_uri_mismatch", "You can't sign in to this app because it doesn't comply with Google's OAuth 2.0 policy. redirect_uri="+redirect)
		return
	}
	back := func(params url.Values) {
		params.Set("state", q.Get("state"))
		http.Redirect(w, r, redirect+"?"+params.Encode(), http.StatusFound)
	}
	switch {
	case q.Get("response_type") != "code":
		back(url.Values{"error": {"unsupported_response_type"}})
		return
	case q.Get("code_challenge") == "":
		back(url.Values{"error": {"invalid_request"}, "error_description": {"code challenge required"}})
		return
	case q.Get("code_challenge_method") != "S256":
		back(url.Values{"error": {"invalid_request"}, "error_description": {"Only S256 code challenges are accepted here."}})
		return
	case q.Get("scope") == "":
		back(url.Values{"error": {"invalid_request"}, "error_description": {"Missing required parameter: scope"}})
		return
	}
	if s.oauth.deny {
		s.oauth.deny = false
		back(url.Values{"error": {"access_denied"}})
		return
	}
	account := s.oauth.signedIn
	if account == "" {
		account = q.Get("login_hint")
	}
	if account == "" {
		authErrorPage(w, "invalid_request", "No account to sign in with: call SignIn or send login_hint.")
		return
	}
	scopes := strings.Fields(q.Get("scope"))
	if q.Get("include_granted_scopes") == "true" {
		scopes = union(scopes, s.oauth.granted[account])
	}
	code := "4/0A" + rand.Text()
	s.oauth.codes[code] = &authCode{
		account: account, redirect: redirect, challenge: q.Get("code_challenge"), scopes: scopes,
		offline: q.Get("access_type") == "offline", expires: time.Now().Add(codeLifetime),
	}
	back(url.Values{"code": {code}, "scope": {strings.Join(scopes, " ")}})
}

// authErrorPage is Google's page for a request it will not redirect back.
func authErrorPage(w http.ResponseWriter, code, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusBadRequest)
	fmt.Fprintf(w, "<!doctype html><title>Error 400: %s</title><h1>Access blocked: Error 400: %s</h1><p>%s</p>", code, code, html.EscapeString(msg))
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// clientAuthenticated checks the web client's credentials, sent in the
// body or as HTTP Basic (RFC 6749 section 2.3.1; Google takes both).
func clientAuthenticated(r *http.Request) bool {
	id, secret, ok := r.BasicAuth()
	if ok {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	return id == webClientID && subtle.ConstantTimeCompare([]byte(secret), []byte(webClientSecret)) == 1
}

// exchange answers the authorization_code grant. s.mu must be held.
func (s *Server) exchange(w http.ResponseWriter, r *http.Request) {
	s.oauth.init()
	if !clientAuthenticated(r) {
		writeTokenError(w, TokenFault{http.StatusUnauthorized, "invalid_client", "Unauthorized"})
		return
	}
	code := s.oauth.codes[r.PostForm.Get("code")]
	delete(s.oauth.codes, r.PostForm.Get("code")) // single use, whatever follows
	switch {
	case code == nil || time.Now().After(code.expires):
		writeTokenError(w, TokenFault{http.StatusBadRequest, "invalid_grant", "Malformed auth code."})
		return
	case r.PostForm.Get("redirect_uri") != code.redirect:
		writeTokenError(w, TokenFault{http.StatusBadRequest, "redirect_uri_mismatch", "Bad Request"})
		return
	case r.PostForm.Get("code_verifier") == "":
		// RFC 7636 section 4.5: a code issued with a challenge is
		// exchanged with its code_verifier; Google refuses one without
		// it as it refuses a wrong one (section 4.6), invalid_grant.
		writeTokenError(w, TokenFault{http.StatusBadRequest, "invalid_grant", "Missing code verifier."})
		return
	case !pkceMatches(r.PostForm.Get("code_verifier"), code.challenge):
		writeTokenError(w, TokenFault{http.StatusBadRequest, "invalid_grant", "Invalid code verifier."})
		return
	}
	s.oauth.exchanges++
	s.oauth.granted[code.account] = union(code.scopes, nil)
	g := &grant{account: code.account, scopes: code.scopes}
	resp := s.issue(g)
	if code.offline {
		g.refresh = "1//0g" + rand.Text()
		s.oauth.grants[g.refresh] = g
		resp["refresh_token"] = g.refresh
	}
	if slices.Contains(code.scopes, "openid") {
		resp["id_token"] = s.idToken(code.account, slices.Contains(code.scopes, "email"))
	}
	writeJSON(w, resp)
}

// refreshPersonal answers a refresh_token grant of a person's grant, and
// reports whether the token was one. s.mu must be held.
func (s *Server) refreshPersonal(w http.ResponseWriter, r *http.Request) bool {
	s.oauth.init()
	g := s.oauth.grants[r.PostForm.Get("refresh_token")]
	if g == nil {
		return false
	}
	if !clientAuthenticated(r) {
		writeTokenError(w, TokenFault{http.StatusUnauthorized, "invalid_client", "Unauthorized"})
		return true
	}
	if g.revoked {
		writeTokenError(w, InvalidGrant)
		return true
	}
	s.oauth.refreshes++
	writeJSON(w, s.issue(g))
	return true
}

// issue makes an access token of g. s.mu must be held.
func (s *Server) issue(g *grant) map[string]any {
	token := "ya29.a0" + rand.Text()
	s.tokens[token] = g.account
	s.oauth.personal[token] = g
	lifetime := s.oauth.lifetime
	if lifetime <= 0 {
		lifetime = 3599 * time.Second
	}
	return map[string]any{
		"access_token": token,
		"expires_in":   int(lifetime / time.Second),
		"scope":        strings.Join(g.scopes, " "),
		"token_type":   "Bearer",
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	json.NewEncoder(w).Encode(v)
}

// pkceMatches checks RFC 7636's S256: BASE64URL-ENCODE(SHA256(ASCII(verifier))) == challenge.
func pkceMatches(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}

// idToken signs an OpenID Connect ID token for account.
func (s *Server) idToken(account string, withEmail bool) string {
	now := time.Now()
	sum := sha256.Sum256([]byte(account))
	claims := map[string]any{
		"iss": "https://accounts.google.com", "azp": webClientID, "aud": webClientID,
		"sub": fmt.Sprintf("1%020d", uint64(sum[0])<<32|uint64(sum[1])<<24|uint64(sum[2])<<16|uint64(sum[3])),
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}
	if withEmail {
		claims["email"], claims["email_verified"] = account, true
	}
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "kid": "calendartest", "typ": "JWT"})
	payload, _ := json.Marshal(claims)
	signed := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(payload)
	digest := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA256, digest[:])
	if err != nil {
		panic("calendartest: sign ID token: " + err.Error())
	}
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func (s *Server) serveRevoke(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeTokenError(w, TokenFault{http.StatusBadRequest, "invalid_request", "malformed form"})
		return
	}
	tok := r.Form.Get("token")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.init()
	g := s.oauth.grants[tok]
	if g == nil {
		g = s.oauth.personal[tok]
	}
	if g == nil || g.revoked {
		writeTokenError(w, TokenFault{http.StatusBadRequest, "invalid_token", "Token expired or revoked"})
		return
	}
	s.oauth.revocations++
	for _, other := range s.oauth.grants {
		if other.account == g.account {
			s.revoke(other)
		}
	}
	s.revoke(g)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write([]byte("{}"))
}
