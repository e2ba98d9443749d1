package connect_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
)

func TestConnectGoogle(t *testing.T) {
	r := newRig(t, 1)
	link := r.link("U1")
	ticket := strings.TrimPrefix(link[strings.Index(link, "?t="):], "?t=")
	status, page := visit(t, r.browser(), link)
	if status != http.StatusOK || !strings.Contains(page, "Connected alice@example.com: you can close this tab") {
		t.Fatalf("the flow ended with %d:\n%s", status, page)
	}
	noSecrets(t, page, ticket)
	select {
	case c := <-r.connected:
		if c.UserID != "U1" || c.Account != "alice@example.com" {
			t.Errorf("Connected(%s, %s), want U1, alice@example.com", c.UserID, c.Account)
		}
	default:
		t.Error("Connected was not called")
	}
	c, ok, err := r.stores[0].Connection(t.Context(), meetingbot.ProviderGoogle, "U1")
	if err != nil || !ok {
		t.Fatalf("Connection(U1) = %v, %v", ok, err)
	}
	if c.Account != "alice@example.com" || c.State != meetingbot.ConnectionActive || !strings.Contains(strings.Join(c.Scopes, " "), "calendar.events.readonly") {
		t.Errorf("stored %s %s %v, want alice@example.com active with the events scope", c.Account, c.State, c.Scopes)
	}
	if bytes.Contains(c.Token, []byte("ya29.")) || bytes.Contains(c.Token, []byte("1//")) {
		t.Errorf("the stored token holds a token in clear")
	}

	// The link works once.
	status, page = visit(t, r.browser(), link)
	if status != http.StatusBadRequest || !strings.Contains(page, "used already") {
		t.Errorf("the link opened twice: %d\n%s", status, page)
	}
}

// forged, replayed, expired and cross-browser steps change nothing.
func TestFlowRefusals(t *testing.T) {
	r := newRig(t, 1)
	noRedirect := func(b *http.Client) *http.Client {
		b.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		return b
	}
	// consentURL starts user's flow in b and returns the consent page's
	// redirect back (the callback URL), not yet opened.
	callbackOf := func(b *http.Client, user string) string {
		t.Helper()
		b = noRedirect(&http.Client{Jar: b.Jar, Transport: b.Transport})
		resp, err := b.Get(r.link(user))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		resp, err = b.Get(resp.Header.Get("Location"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Header.Get("Location")
	}
	tests := []struct {
		name   string
		run    func() (int, string)
		status int
		says   string
	}{
		{"expired link", func() (int, string) {
			l := r.link("U1")
			r.fakeClock.Advance(11 * time.Minute)
			defer r.fakeClock.Advance(-11 * time.Minute)
			return visit(t, r.browser(), l)
		}, 400, "expired"},
		{"forged ticket", func() (int, string) { return visit(t, r.browser(), r.front.URL+"/google/oauth/start?t=forged") }, 400, "used already"},
		{"forged state", func() (int, string) {
			b := r.browser()
			cb := callbackOf(b, "U1")
			u, _ := url.Parse(cb)
			q := u.Query()
			q.Set("state", "forged")
			u.RawQuery = q.Encode()
			return visit(t, b, u.String())
		}, 400, "finished already"},
		{"replayed callback", func() (int, string) {
			b := r.browser()
			cb := callbackOf(b, "U1")
			u, _ := url.Parse(cb)
			cookies := b.Jar.Cookies(u) // kept, as a replaying browser would
			if status, page := visit(t, b, cb); status != 200 {
				t.Fatalf("first callback: %d %s", status, page)
			}
			<-r.connected
			if _, err := r.stores[0].DeleteConnection(t.Context(), meetingbot.ProviderGoogle, "U1"); err != nil {
				t.Fatal(err)
			}
			b.Jar.SetCookies(u, cookies)
			return visit(t, b, cb)
		}, 400, "finished already"},
		{"another browser", func() (int, string) {
			cb := callbackOf(r.browser(), "U1")
			return visit(t, r.browser(), cb)
		}, 400, "another browser"},
		{"expired consent", func() (int, string) {
			b := r.browser()
			cb := callbackOf(b, "U1")
			r.fakeClock.Advance(11 * time.Minute)
			defer r.fakeClock.Advance(-11 * time.Minute)
			return visit(t, b, cb)
		}, 400, "took too long"},
		{"denied consent", func() (int, string) {
			r.google.DenyConsent()
			return visit(t, r.browser(), r.link("U2"))
		}, 403, "did not allow access to Google Calendar"},
		{"wrong account", func() (int, string) {
			r.google.SignIn("mallory@example.com")
			defer r.google.SignIn("")
			return visit(t, r.browser(), r.link("U2"))
		}, 403, "You signed in to Google as mallory@example.com, but your Slack profile's email is bob@example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := r.stores[0].Connections(t.Context())
			status, page := tt.run()
			if status != tt.status || !strings.Contains(page, tt.says) {
				t.Errorf("%s: %d, want %d saying %q:\n%s", tt.name, status, tt.status, tt.says, page)
			}
			noSecrets(t, page)
			after, _ := r.stores[0].Connections(t.Context())
			if len(after) != len(before) {
				t.Errorf("%s: connections %d -> %d: a refused step changed the store", tt.name, len(before), len(after))
			}
		})
	}
	if n := r.google.Grants("mallory@example.com"); n != 0 {
		t.Errorf("the wrong account's grant is live (%d): it must be revoked", n)
	}
	if _, ok, _ := r.stores[0].Connection(t.Context(), meetingbot.ProviderGoogle, "U2"); ok {
		t.Errorf("U2 connected another account")
	}
}

// Two replicas behind one front finish each other's flows: each request
// goes to the other one.
func TestReplicasFinishEachOthersFlows(t *testing.T) {
	r := newRig(t, 2)
	for i := range 2 {
		r.turn.Store(int64(i)) // flow 0 starts on replica 0, flow 1 on replica 1
		status, page := visit(t, r.browser(), r.link("U1"))
		if status != http.StatusOK || !strings.Contains(page, "Connected alice@example.com") {
			t.Fatalf("flow %d across replicas: %d\n%s", i, status, page)
		}
		<-r.connected
	}
	want := []served{{0, "/google/oauth/start"}, {1, "/google/oauth/callback"}, {1, "/google/oauth/start"}, {0, "/google/oauth/callback"}}
	if fmt.Sprint(r.served) != fmt.Sprint(want) {
		t.Errorf("the front served %v, want %v", r.served, want)
	}
}

func TestDisconnect(t *testing.T) {
	r := newRig(t, 1)
	if status, page := visit(t, r.browser(), r.link("U1")); status != 200 {
		t.Fatalf("connect: %d %s", status, page)
	}
	c, ok, err := r.replica[0].Disconnect(t.Context(), meetingbot.ProviderGoogle, "U1")
	if err != nil || !ok || c.Account != "alice@example.com" {
		t.Fatalf("Disconnect = %v, %v, %v", c.Account, ok, err)
	}
	select {
	case s := <-r.stopped:
		if s.UserID != "U1" {
			t.Errorf("Disconnecting(%s), want U1", s.UserID)
		}
	default:
		t.Error("Disconnecting was not called before the revocation")
	}
	if n := r.google.Grants("alice@example.com"); n != 0 {
		t.Errorf("Grants(alice) after Disconnect = %d, want 0 (revoked)", n)
	}
	if _, ok, _ := r.stores[0].Connection(t.Context(), meetingbot.ProviderGoogle, "U1"); ok {
		t.Error("the connection is still stored")
	}
	if _, ok, err := r.replica[0].Disconnect(t.Context(), meetingbot.ProviderGoogle, "U1"); ok || err != nil {
		t.Errorf("Disconnect twice = %v, %v; want false, nil", ok, err)
	}
}

// Start sends the browser to Google's consent page with the parameters
// the web-server guide and RFC 7636 ask for, and binds the consent to
// the browser with a cookie scripts cannot read, sent over https only and
// not on cross-site subrequests.
func TestStartBindsTheBrowser(t *testing.T) {
	r := newRig(t, 1)
	b := r.browser()
	b.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := b.Get(r.link("U1"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	consent, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("start answered %d to %q, want a redirect to the consent page", resp.StatusCode, resp.Header.Get("Location"))
	}
	q := consent.Query()
	for param, want := range map[string]string{
		"code_challenge_method":  "S256",
		"access_type":            "offline",
		"include_granted_scopes": "true",
		"response_type":          "code",
		"login_hint":             "alice@example.com",
		"redirect_uri":           r.front.URL + "/google/oauth/callback",
	} {
		if got := q.Get(param); got != want {
			t.Errorf("the consent URL's %s = %q, want %q", param, got, want)
		}
	}
	// RFC 7636 section 4.2: BASE64URL(SHA256(verifier)), 43 characters.
	if c := q.Get("code_challenge"); len(c) != 43 || strings.ContainsAny(c, "+/=") {
		t.Errorf("the consent URL's code_challenge = %q, want an S256 challenge", c)
	}
	if scopes := strings.Fields(q.Get("scope")); strings.Join(scopes, " ") != "email https://www.googleapis.com/auth/calendar.events.readonly openid" {
		t.Errorf("the consent URL's scope = %v, want openid, email and calendar.events.readonly", scopes)
	}
	if q.Get("state") == "" {
		t.Error("the consent URL has no state")
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "meetingbot_oauth_google" {
			cookie = c
		}
	}
	switch {
	case cookie == nil:
		t.Fatalf("start set no binding cookie: %v", resp.Header["Set-Cookie"])
	case !cookie.Secure || !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode:
		t.Errorf("the binding cookie is Secure=%v HttpOnly=%v SameSite=%v, want Secure, HttpOnly, SameSite=Lax (%s)",
			cookie.Secure, cookie.HttpOnly, cookie.SameSite, resp.Header.Get("Set-Cookie"))
	case cookie.Path != "/google/oauth/" || cookie.MaxAge != 600:
		t.Errorf("the binding cookie's Path=%q MaxAge=%d, want /google/oauth/ and 600", cookie.Path, cookie.MaxAge)
	}
}

// A callback opened in another browser (a link passed on, or an attacker
// replaying a victim's callback into their own browser) is refused and
// leaves the sign-in to the browser that started it, which finishes it.
func TestAnotherBrowserLeavesTheSignIn(t *testing.T) {
	r := newRig(t, 1)
	mine := r.browser()
	noRedirect := &http.Client{Jar: mine.Jar, Transport: mine.Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(r.link("U1"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = noRedirect.Get(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	callback := resp.Header.Get("Location")

	other := r.browser()
	if _, err := other.Get(r.link("U2")); err != nil { // a sign-in of its own: a cookie of its own
		t.Fatal(err)
	}
	<-r.connected
	for _, b := range []*http.Client{r.browser(), other} {
		if status, page := visit(t, b, callback); status != http.StatusBadRequest || !strings.Contains(page, "started in another browser") {
			t.Errorf("the callback in another browser: %d, want 400 saying so:\n%s", status, page)
		}
	}
	status, page := visit(t, mine, callback)
	if status != http.StatusOK || !strings.Contains(page, "Connected alice@example.com") {
		t.Errorf("the callback in the browser that started it, after another's: %d, want it connected:\n%s", status, page)
	}
}

// A sign-in the bot refuses never ends a grant that works: Google has one
// grant per account and client, and revoking any token of it ends them
// all. Bob, connected, opens Mallory's link and signs in as himself: the
// bot refuses (another account) and leaves Bob's grant live. A sign-in
// the bot cannot check now (Slack did not answer) is not revoked either:
// the person may simply try again.
func TestRefusedSignInKeepsAWorkingGrant(t *testing.T) {
	r := newRig(t, 1)
	if status, page := visit(t, r.browser(), r.link("U2")); status != http.StatusOK {
		t.Fatalf("Bob's sign-in ended with %d:\n%s", status, page)
	}
	<-r.connected

	r.google.SignIn("bob@example.com")
	status, page := visit(t, r.browser(), r.link("U3"))
	r.google.SignIn("")
	if status != http.StatusForbidden || !strings.Contains(page, "You signed in to Google as bob@example.com, but your Slack profile's email is mallory@example.com") {
		t.Fatalf("Mallory's link, signed in as Bob: %d, want 403 naming both accounts:\n%s", status, page)
	}
	if strings.Contains(page, "given back") {
		t.Errorf("the page says the access was given back, though Bob's grant is his connection's:\n%s", page)
	}
	if n := r.google.Grants("bob@example.com"); n == 0 {
		t.Error("Bob's grant was revoked by a sign-in the bot refused: his connection stopped working")
	}
	if _, _, err := r.replica[0].Account(t.Context(), "U2", "bob@example.com"); err != nil {
		t.Errorf("Bob's connection after the refused sign-in: %v, want it in use", err)
	}

	r.google.SignIn("carol@example.com")
	status, page = visit(t, r.browser(), r.link("UNREACHABLE"))
	r.google.SignIn("")
	if status != http.StatusBadGateway || !strings.Contains(page, "Try again in a minute") {
		t.Errorf("a sign-in Slack could not check: %d, want 502 saying to try again:\n%s", status, page)
	}
	if n := r.google.Grants("carol@example.com"); n != 1 {
		t.Errorf("grants of carol@ after a sign-in the bot could not check = %d, want 1: not revoked on a transient failure", n)
	}
}
