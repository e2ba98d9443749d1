package connect_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/meetingbot/meetingbot"
)

// A link asking for the write scope (incremental authorization) sends the
// browser to Google with it, the read-only scopes and
// include_granted_scopes; the connection made again records what Google
// granted: the earlier scopes and the new one. A plain link asks for no
// write access.
func TestLinkScopesAsksIncrementally(t *testing.T) {
	r := newRig(t, 1)
	if status, page := visit(t, r.browser(), r.link("U1")); status != http.StatusOK {
		t.Fatalf("first connection: %d\n%s", status, page)
	}
	<-r.connected
	c, _, _ := r.stores[0].Connection(t.Context(), meetingbot.ProviderGoogle, "U1")
	if c.CanAnswer() {
		t.Fatalf("a read-only connection can answer: scopes %v", c.Scopes)
	}

	link, err := r.replica[0].LinkScopes(t.Context(), meetingbot.ProviderGoogle, "U1", []string{meetingbot.ScopeCalendarEvents})
	if err != nil {
		t.Fatal(err)
	}
	b := r.browser()
	noFollow := &http.Client{Jar: b.Jar, Transport: b.Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	consent, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	q := consent.Query()
	scopes := strings.Fields(q.Get("scope"))
	for _, want := range []string{"openid", "email", "https://www.googleapis.com/auth/calendar.events.readonly", meetingbot.ScopeCalendarEvents} {
		if !slices.Contains(scopes, want) {
			t.Errorf("the consent page asks for %v, want %s among them", scopes, want)
		}
	}
	if q.Get("include_granted_scopes") != "true" {
		t.Errorf("include_granted_scopes = %q, want true", q.Get("include_granted_scopes"))
	}
	if status, page := visit(t, b, consent.String()); status != http.StatusOK {
		t.Fatalf("the upgrade: %d\n%s", status, page)
	}
	got := <-r.connected
	if !got.CanAnswer() || !slices.Contains(got.Scopes, "https://www.googleapis.com/auth/calendar.events.readonly") {
		t.Errorf("after the upgrade the connection has %v, want the write scope and the read-only one", got.Scopes)
	}
	c, _, _ = r.stores[0].Connection(t.Context(), meetingbot.ProviderGoogle, "U1")
	if !c.CanAnswer() {
		t.Errorf("stored scopes %v, want the write scope", c.Scopes)
	}

	// Another person's plain link asks for no more than before.
	plain := r.link("U2")
	resp, err = noFollow.Get(plain)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	u, _ := url.Parse(resp.Header.Get("Location"))
	if slices.Contains(strings.Fields(u.Query().Get("scope")), meetingbot.ScopeCalendarEvents) {
		t.Errorf("a plain link asks for %q, want no write scope", u.Query().Get("scope"))
	}
}
