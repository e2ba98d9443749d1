package slacktest

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// People's own Slack users, as Slack's OAuth v2 lets an app act for them
// ("Installing with OAuth", https://docs.slack.dev/authentication/installing-with-oauth):
//
//   - GET /oauth/v2/authorize (on the workspace's origin, not under /api/)
//     takes client_id, scope, user_scope, redirect_uri and state; the
//     person approves at once, as the user chosen with SignIn, and is sent
//     to redirect_uri?code=…&state=… (in the workspace chosen with
//     SignInWorkspace, the emulated one by default, whose ID
//     oauth.v2.access answers as team.id: "the workspace the app was
//     installed to" for a user token too), or, when DenyAuthorization was
//     called, redirect_uri?error=access_denied&state=… . A redirect_uri
//     the app did not register is refused with an error page.
//   - oauth.v2.access (https://docs.slack.dev/reference/methods/oauth.v2.access)
//     exchanges the code, with client_id and client_secret (HTTP Basic or
//     form) and the same redirect_uri: ok, app_id, team{id,name},
//     authed_user (a person who authorizes the app again gets the token
//     they had: "In most cases, the token string remains the same",
//     slackapi/bolt-python#969; with token rotation, a new one),
//     authed_user{id, scope, access_token (xoxp-…), token_type "user"}, and
//     with token rotation on (SetTokenRotation), authed_user's refresh_token
//     and expires_in. A code is single use (invalid_code after). Its
//     grant_type=refresh_token form (token rotation, "Using token
//     rotation") answers a new access_token, refresh_token and expires_in;
//     a refresh token used or revoked is invalid_refresh_token. With
//     rotation an access token "expires every 12 hours" (expires_in,
//     SetTokenRotation's span): a call with one past its expiry is
//     token_expired, as Slack answers it; only a refresh makes a new one.
//   - auth.revoke (https://docs.slack.dev/reference/methods/auth.revoke)
//     revokes the calling user token: ok, revoked true; afterwards the token
//     is token_revoked, and with rotation the person's refresh token is no
//     longer honoured either (the app's authorization by them ends). An
//     expired access token is token_expired here too: the authorization
//     stays, refresh token and all.
//   - users.profile.get and users.profile.set
//     (https://docs.slack.dev/reference/methods/users.profile.set) read and
//     write the calling user's status_text, status_emoji and
//     status_expiration (a Unix time; 0 for none), with a user token only.
//     Slack clears a status when its expiration passes ("Set a user's
//     custom status": "status_expiration … the status will be cleared"),
//     so a read after it answers the status empty.

// Slack app credentials of the emulated app.
const (
	ClientID     = "1234567890.0987654321"
	ClientSecret = "slacktest-client-secret"
)

type oauthState struct {
	redirects []string
	signedIn  string
	workspace string // the team the next consents are given in; "" for TeamID
	deny      bool
	rotation  time.Duration
	codes     map[string]string // code -> user
	users     map[string]string // user token -> user
	refresh   map[string]string // refresh token -> user
	revoked   map[string]bool
	expires   map[string]time.Time // rotated access token -> when it expires
	statuses  map[string]Status
	sets      []StatusSet
	// perMinute is users.profile.set's limit in each span (0: none);
	// window and used count the calls of the current span, limited the
	// ones refused.
	perMinute     int
	span          time.Duration
	window        time.Time
	used, limited int
}

// Status is a user's custom status as users.profile.set wrote it.
type Status struct {
	Text, Emoji string
	Expiration  time.Time // zero for none
}

// StatusSet is one users.profile.set call that changed a status.
type StatusSet struct {
	User string
	Status
	At time.Time
}

func (o *oauthState) init() {
	if o.codes == nil {
		o.codes, o.users, o.refresh, o.revoked, o.statuses = map[string]string{}, map[string]string{}, map[string]string{}, map[string]bool{}, map[string]Status{}
		o.expires = map[string]time.Time{}
	}
}

func (s *Server) registerOAuth(mux *http.ServeMux) {
	mux.HandleFunc("GET /oauth/v2/authorize", s.serveAuthorize)
	mux.HandleFunc("/api/oauth.v2.access", s.serveAccess)
	mux.HandleFunc("/api/auth.revoke", s.userMethod(s.revokeUser))
	mux.HandleFunc("/api/users.profile.get", s.userMethod(s.profileGet))
	mux.HandleFunc("/api/users.profile.set", s.userMethod(s.profileSet))
}

// RegisterRedirect lets the app send people back to uri.
func (s *Server) RegisterRedirect(uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ext.oauth.redirects = append(s.ext.oauth.redirects, uri)
}

// SetStatusRateLimit limits users.profile.set to n calls in each fixed
// span of the server's clock (Slack's is a minute; a test may scale it
// down), answering more with 429 and Retry-After as Slack's rate limits
// do (https://docs.slack.dev/apis/web-api/rate-limits); 0 removes it.
func (s *Server) SetStatusRateLimit(n int, span time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ext.oauth.perMinute, s.ext.oauth.span = n, span
}

// StatusRateLimited returns how many users.profile.set calls were refused
// with 429.
func (s *Server) StatusRateLimited() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ext.oauth.limited
}

// SignIn makes userID the one who approves on the authorize page.
func (s *Server) SignIn(userID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ext.oauth.signedIn = userID
}

// SignInWorkspace makes teamID the workspace the person approves in on
// the authorize page, as a person signed in to several picks one; ""
// goes back to the emulated workspace (TeamID).
func (s *Server) SignInWorkspace(teamID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ext.oauth.workspace = teamID
}

// DenyAuthorization makes the next approval refused.
func (s *Server) DenyAuthorization() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ext.oauth.deny = true
}

// SetTokenRotation turns token rotation on, user tokens expiring after d;
// 0 turns it off.
func (s *Server) SetTokenRotation(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ext.oauth.rotation = d
}

// RevokeUserTokens revokes every token of userID, as the person removing
// the app's access does.
func (s *Server) RevokeUserTokens(userID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ext.oauth.init()
	for tok, u := range s.ext.oauth.users {
		if u == userID {
			s.ext.oauth.revoked[tok] = true
		}
	}
	for tok, u := range s.ext.oauth.refresh {
		if u == userID {
			delete(s.ext.oauth.refresh, tok)
		}
	}
}

// GrantUserToken returns a user token of userID with the user scopes, as
// one finished OAuth v2 flow obtains it (oauth.v2.access's
// authed_user.access_token): for tests of many people, whose flows are
// not what they test.
func (s *Server) GrantUserToken(userID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ext.oauth.init()
	tok, _, _ := s.issueUser(userID)
	return tok
}

// UserTokens returns how many live (not revoked) user tokens userID has.
func (s *Server) UserTokens(userID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for tok, u := range s.ext.oauth.users {
		if u == userID && !s.ext.oauth.revoked[tok] {
			n++
		}
	}
	return n
}

// SetStatus sets userID's status as the person does in Slack.
func (s *Server) SetStatus(userID string, st Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ext.oauth.init()
	s.ext.oauth.statuses[userID] = st
}

// StatusOf returns userID's status now: empty once its expiration passed.
func (s *Server) StatusOf(userID string) Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statusNow(userID)
}

// StatusSets returns the users.profile.set calls that set a status, in
// order.
func (s *Server) StatusSets() []StatusSet {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ext.oauth.sets)
}

// statusNow is userID's status at the server's clock. s.mu must be held.
func (s *Server) statusNow(userID string) Status {
	s.ext.oauth.init()
	st := s.ext.oauth.statuses[userID]
	if !st.Expiration.IsZero() && !s.now().Before(st.Expiration) {
		return Status{}
	}
	return st
}

func (s *Server) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ext.oauth.init()
	redirect := q.Get("redirect_uri")
	if q.Get("client_id") != ClientID || !slices.Contains(s.ext.oauth.redirects, redirect) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, "<!doctype html><title>Slack</title><p>Something went wrong when authorizing this app: bad_redirect_uri or invalid_client_id.</p>")
		return
	}
	back := url.Values{"state": {q.Get("state")}}
	switch {
	case s.ext.oauth.deny:
		s.ext.oauth.deny = false
		back.Set("error", "access_denied")
	case s.ext.oauth.signedIn == "":
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, "<!doctype html><title>Slack</title><p>Sign in to your workspace first (SignIn).</p>")
		return
	default:
		code := fmt.Sprintf("%d.%s", time.Now().Unix(), rand.Text())
		team := s.ext.oauth.workspace
		if team == "" {
			team = TeamID
		}
		s.ext.oauth.codes[code] = s.ext.oauth.signedIn + "\x00" + redirect + "\x00" + q.Get("user_scope") + "\x00" + team
		back.Set("code", code)
	}
	http.Redirect(w, r, redirect+"?"+back.Encode(), http.StatusFound)
}

func (s *Server) serveAccess(w http.ResponseWriter, r *http.Request) {
	form, err := readForm(r)
	if err != nil {
		writeJSON(w, slackErr("invalid_form_data"))
		return
	}
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = form.Get("client_id"), form.Get("client_secret")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ext.oauth.init()
	s.calls = append(s.calls, Call{Method: "oauth.v2.access", Form: cloneValues(form), Authorized: true, At: s.now()})
	if retryAfter, limited := s.overTier("oauth.v2.access", s.now()); limited {
		writeRateLimited(w, retryAfter)
		return
	}
	switch {
	case id != ClientID:
		writeJSON(w, slackErr("invalid_client_id"))
		return
	case subtle.ConstantTimeCompare([]byte(secret), []byte(ClientSecret)) != 1:
		writeJSON(w, slackErr("bad_client_secret"))
		return
	}
	if form.Get("grant_type") == "refresh_token" {
		user, ok := s.ext.oauth.refresh[form.Get("refresh_token")]
		if !ok {
			writeJSON(w, slackErr("invalid_refresh_token"))
			return
		}
		delete(s.ext.oauth.refresh, form.Get("refresh_token"))
		tok, refresh, expires := s.issueUser(user)
		writeJSON(w, ok200(map[string]any{"app_id": AppID, "token_type": "user", "access_token": tok, "refresh_token": refresh, "expires_in": expires,
			"team": map[string]any{"id": TeamID, "name": "Slack Test"}}))
		return
	}
	grant, ok := s.ext.oauth.codes[form.Get("code")]
	delete(s.ext.oauth.codes, form.Get("code"))
	if !ok {
		writeJSON(w, slackErr("invalid_code"))
		return
	}
	parts := strings.SplitN(grant, "\x00", 4)
	if form.Get("redirect_uri") != parts[1] {
		writeJSON(w, slackErr("bad_redirect_uri"))
		return
	}
	tok, refresh, expires := s.issueUser(parts[0])
	authed := map[string]any{"id": parts[0], "scope": parts[2], "access_token": tok, "token_type": "user"}
	if refresh != "" {
		authed["refresh_token"], authed["expires_in"] = refresh, expires
	}
	writeJSON(w, ok200(map[string]any{
		"app_id": AppID, "authed_user": authed, "scope": "", "token_type": "bot",
		"team": map[string]any{"id": parts[3], "name": "Slack Test"}, "enterprise": nil, "is_enterprise_install": false,
	}))
}

func ok200(body map[string]any) response {
	body["ok"] = true
	return response{status: http.StatusOK, body: body}
}

// issueUser makes a user token for user, and with rotation on a refresh
// token and its lifetime in seconds; without rotation a user who has a
// live token gets it again. s.mu must be held.
func (s *Server) issueUser(user string) (tok, refresh string, expires int) {
	if s.ext.oauth.rotation == 0 {
		for t, u := range s.ext.oauth.users {
			if u == user && !s.ext.oauth.revoked[t] && !strings.HasPrefix(t, "xoxe.") {
				return t, "", 0
			}
		}
	}
	tok = "xoxp-" + rand.Text()
	if s.ext.oauth.rotation > 0 {
		tok = "xoxe.xoxp-" + rand.Text()
		refresh = "xoxe-1-" + rand.Text()
		s.ext.oauth.refresh[refresh] = user
		expires = int(s.ext.oauth.rotation / time.Second)
		s.ext.oauth.expires[tok] = s.now().Add(s.ext.oauth.rotation)
	}
	s.ext.oauth.users[tok] = user
	return tok, refresh, expires
}

// userMethod serves a Web API method a user token calls, answering
// not_authed, invalid_auth or token_revoked as Slack does.
func (s *Server) userMethod(h func(user, token string, form url.Values) response) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		form, err := readForm(r)
		if err != nil {
			writeJSON(w, slackErr("invalid_form_data"))
			return
		}
		token := form.Get("token")
		if token == "" {
			token = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		}
		form.Del("token")
		method := strings.TrimPrefix(r.URL.Path, "/api/")
		s.mu.Lock()
		s.ext.oauth.init()
		_, ok := s.ext.oauth.users[token]
		s.calls = append(s.calls, Call{Method: method, Form: cloneValues(form), Authorized: ok && !s.ext.oauth.revoked[token], At: s.now()})
		s.mu.Unlock()
		// SetLatency holds user-token calls too: one whose client gives up
		// meanwhile (a bot killed mid-call) takes no effect.
		if !s.wait(r, time.Duration(s.latency.Load())) {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		user, ok := s.ext.oauth.users[token]
		if retryAfter, limited := s.overTier(method, s.now()); limited {
			writeRateLimited(w, retryAfter)
			return
		}
		switch {
		case token == "":
			writeJSON(w, slackErr("not_authed"))
		case s.tokens[token]:
			writeJSON(w, slackErr("not_allowed_token_type")) // a bot token
		case !ok:
			writeJSON(w, slackErr("invalid_auth"))
		case s.ext.oauth.revoked[token]:
			writeJSON(w, slackErr("token_revoked"))
		case s.expired(token):
			writeJSON(w, slackErr("token_expired"))
		case method == "users.profile.set" && s.overLimit():
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"ok":false,"error":"ratelimited"}`))
		default:
			writeJSON(w, h(user, token, form))
		}
	}
}

func (s *Server) revokeUser(user, token string, _ url.Values) response {
	s.ext.oauth.revoked[token] = true
	if _, rotated := s.ext.oauth.expires[token]; rotated {
		for r, u := range s.ext.oauth.refresh {
			if u == user {
				delete(s.ext.oauth.refresh, r)
			}
		}
	}
	return ok200(map[string]any{"revoked": true})
}

// expired reports whether token is a rotated access token past its
// expiry. s.mu must be held.
func (s *Server) expired(token string) bool {
	exp, ok := s.ext.oauth.expires[token]
	return ok && !s.now().Before(exp)
}

// RefreshTokens returns how many live refresh tokens userID has: with
// token rotation, whether the app's authorization by them still stands.
func (s *Server) RefreshTokens(userID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, u := range s.ext.oauth.refresh {
		if u == userID {
			n++
		}
	}
	return n
}

func (s *Server) profileGet(user, _ string, _ url.Values) response {
	st := s.statusNow(user)
	var exp int64
	if !st.Expiration.IsZero() {
		exp = st.Expiration.Unix()
	}
	return ok200(map[string]any{"profile": map[string]any{"status_text": st.Text, "status_emoji": st.Emoji, "status_expiration": exp}})
}

func (s *Server) profileSet(user, _ string, form url.Values) response {
	var p struct {
		Text       *string `json:"status_text"`
		Emoji      *string `json:"status_emoji"`
		Expiration *int64  `json:"status_expiration"`
	}
	if err := json.Unmarshal([]byte(form.Get("profile")), &p); err != nil {
		return slackErr("invalid_profile")
	}
	st := s.statusNow(user)
	if p.Text != nil {
		st.Text = *p.Text
	}
	if p.Emoji != nil {
		st.Emoji = *p.Emoji
	}
	if p.Expiration != nil {
		st.Expiration = time.Time{}
		if *p.Expiration > 0 {
			st.Expiration = time.Unix(*p.Expiration, 0)
		}
	}
	if len([]rune(st.Text)) > 100 {
		return slackErr("too_long")
	}
	s.ext.oauth.statuses[user] = st
	s.ext.oauth.sets = append(s.ext.oauth.sets, StatusSet{User: user, Status: st, At: s.now()})
	return ok200(map[string]any{"profile": map[string]any{"status_text": st.Text, "status_emoji": st.Emoji}})
}

// overLimit counts one users.profile.set call and reports whether it is
// over the limit. s.mu must be held.
func (s *Server) overLimit() bool {
	o := &s.ext.oauth
	if o.perMinute <= 0 {
		return false
	}
	if now := s.now().Truncate(o.span); !now.Equal(o.window) {
		o.window, o.used = now, 0
	}
	o.used++
	if o.used > o.perMinute {
		o.limited++
		return true
	}
	return false
}

// UserToken runs Slack's OAuth v2 against s for userID, as a person
// approving the app does (SignIn, /oauth/v2/authorize with the user scopes
// of a Slack status, oauth.v2.access), and returns their user token: for
// tests of what a person's own token does.
func (s *Server) UserToken(ctx context.Context, userID string) (string, error) {
	const redirect = "https://bot.example.com/slack/oauth/callback"
	s.RegisterRedirect(redirect)
	s.SignIn(userID)
	base, err := url.Parse(s.URL())
	if err != nil {
		return "", err
	}
	q := url.Values{"client_id": {ClientID}, "user_scope": {"users.profile:read,users.profile:write"}, "redirect_uri": {redirect}, "state": {"s"}}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base.Scheme+"://"+base.Host+"/oauth/v2/authorize?"+q.Encode(), nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return "", err
	}
	got, err := slack.GetOAuthV2ResponseContext(ctx, http.DefaultClient, ClientID, ClientSecret, loc.Query().Get("code"), redirect, slack.OAuthOptionAPIURL(s.URL()))
	if err != nil {
		return "", err
	}
	return got.AuthedUser.AccessToken, nil
}
