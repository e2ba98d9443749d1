package connect

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"golang.org/x/oauth2"

	"github.com/meetingbot/meetingbot"
)

// cookieName is the cookie binding a consent to the browser that started
// it, one per provider.
func cookieName(provider meetingbot.Provider) string { return "meetingbot_oauth_" + string(provider) }

// Handler serves the flow of every provider: GET /<provider>/oauth/start
// and GET /<provider>/oauth/callback. Mount it at "/google/oauth/" and
// "/slack/oauth/". A step that fails answers with a page that says what
// happened and what to do, and changes nothing: 4xx for whatever the
// person can put right (a used, expired, forged or cut link, another
// browser, consent refused, the wrong account or a permission left out),
// 5xx only for a fault on the bot's side or the provider's that a new
// attempt may not meet (the store, a provider that cannot be reached or
// answers what it should not), so that monitoring counts those and not
// people's slips.
func (a *Accounts) Handler() http.Handler {
	mux := http.NewServeMux()
	for name := range a.providers {
		mux.HandleFunc("GET "+StartPath(name), func(w http.ResponseWriter, r *http.Request) { a.start(w, r, name) })
		mux.HandleFunc("GET "+CallbackPath(name), func(w http.ResponseWriter, r *http.Request) { a.callback(w, r, name) })
	}
	return mux
}

// newLink is the advice of a page whose flow cannot go on.
func (a *Accounts) newLink(p Provider) string {
	return fmt.Sprintf("Ask for a new link in Slack: type %s, or use the button on the bot's Home tab.", a.commandFor(p))
}

// commandFor is the command that gives a link for p.
func (a *Accounts) commandFor(p Provider) string {
	if p.Name() == meetingbot.ProviderSlack {
		return a.command + " status on"
	}
	return a.command + " connect"
}

// start takes a link (once) and sends the browser to the consent page,
// bound to it by a cookie.
func (a *Accounts) start(w http.ResponseWriter, r *http.Request, name meetingbot.Provider) {
	p := a.providers[name]
	ctx := r.Context()
	ticket := r.URL.Query().Get("t")
	if ticket == "" {
		render(w, http.StatusBadRequest, page{Heading: "This link is not complete", What: "The link has no ticket: it was cut when copied.", Fix: a.newLink(p)})
		return
	}
	link, ok, err := a.cfg.Store.TakeOAuthState(ctx, hash(ticket))
	switch {
	case err != nil:
		a.log.Error("cannot take a link", "provider", name, "err", err)
		render(w, http.StatusServiceUnavailable, page{Heading: "Something went wrong on my side", What: "I could not read the link.", Fix: "Try the link again in a minute; if it keeps failing, tell whoever runs the bot."})
		return
	case !ok || link.Step != meetingbot.OAuthLink || link.Provider != name:
		render(w, http.StatusBadRequest, page{Heading: "This link was used already", What: "Each link works once, and this one has been opened before (or it is not one I gave).", Fix: a.newLink(p)})
		return
	case !a.now().Before(link.ExpiresAt):
		render(w, http.StatusBadRequest, page{Heading: "This link has expired", What: fmt.Sprintf("A link works for %d minutes after I give it.", int(LinkTTL.Minutes())), Fix: a.newLink(p)})
		return
	}
	hint, err := p.Expect(ctx, link.UserID)
	if err != nil {
		a.log.Warn("cannot look up the account expected; consent goes on without a hint", "provider", name, "user", link.UserID, "err", err)
		hint = ""
	}
	state, binding, verifier := rand.Text(), rand.Text(), oauth2.GenerateVerifier()
	id := hash(state)
	err = a.cfg.Store.PutOAuthState(ctx, meetingbot.OAuthState{
		ID: id, Step: meetingbot.OAuthConsent, Provider: name, UserID: link.UserID, Binding: hash(binding),
		Verifier: a.cfg.Keyring.Seal([]byte(verifier), "verifier:"+id), ExpiresAt: a.now().Add(ConsentTTL),
		Scopes: link.Scopes,
	})
	if err != nil {
		a.log.Error("cannot keep a consent's state", "provider", name, "err", err)
		render(w, http.StatusServiceUnavailable, page{Heading: "Something went wrong on my side", What: "I could not start the sign-in.", Fix: a.newLink(p)})
		return
	}
	securityHeaders(w.Header())
	http.SetCookie(w, &http.Cookie{
		Name: cookieName(name), Value: binding, Path: "/" + string(name) + "/oauth/",
		MaxAge: int(ConsentTTL.Seconds()), HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode,
	})
	http.Redirect(w, r, p.AuthCodeURL(state, verifier, hint, link.Scopes), http.StatusFound)
}

// callback finishes a consent: the state checked against the cookie and
// the store, the code exchanged, the account checked, the grant kept.
func (a *Accounts) callback(w http.ResponseWriter, r *http.Request, name meetingbot.Provider) {
	p := a.providers[name]
	ctx := r.Context()
	q := r.URL.Query()
	fail := func(status int, heading, what, fix string) {
		render(w, status, page{Heading: heading, What: what, Fix: fix})
	}
	cookie, err := r.Cookie(cookieName(name))
	if err != nil || cookie.Value == "" {
		fail(http.StatusBadRequest, "This sign-in was started in another browser",
			"I can finish a sign-in only in the browser that opened my link.", "Open the link from Slack in this browser. "+a.newLink(p))
		return
	}
	state := q.Get("state")
	if state == "" {
		clearCookie(w, name)
		fail(http.StatusBadRequest, "This page is not a sign-in I started", "It came without the state I sent.", a.newLink(p))
		return
	}
	// The state is looked at before it is taken: a callback from another
	// browser (which carries another cookie, or a link passed on) must
	// leave the sign-in for the browser that started it.
	st, ok, err := a.cfg.Store.OAuthState(ctx, hash(state))
	if err == nil && ok && st.Step == meetingbot.OAuthConsent && st.Provider == name &&
		subtle.ConstantTimeCompare([]byte(st.Binding), []byte(hash(cookie.Value))) != 1 {
		a.log.Warn("a consent came back to another browser than the one that started it: refused, and left to that browser", "provider", name, "user", st.UserID)
		fail(http.StatusBadRequest, "This sign-in was started in another browser",
			"I can finish a sign-in only in the browser that opened my link.", "Open the link from Slack in the browser you use, or ask for a new one: type "+a.commandFor(p)+" in Slack.")
		return
	}
	clearCookie(w, name)
	if err == nil && ok {
		st, ok, err = a.cfg.Store.TakeOAuthState(ctx, hash(state))
	}
	switch {
	case err != nil:
		// The store failed: the bot's fault, not the person's.
		a.log.Error("cannot take a consent's state", "provider", name, "err", err)
		fail(http.StatusServiceUnavailable, "Something went wrong on my side", "I could not read the sign-in's state.", a.newLink(p))
		return
	case !ok || st.Step != meetingbot.OAuthConsent || st.Provider != name:
		fail(http.StatusBadRequest, "This sign-in was finished already", "Each sign-in finishes once, and this one has come back before (or it is not one I started).", a.newLink(p))
		return
	case subtle.ConstantTimeCompare([]byte(st.Binding), []byte(hash(cookie.Value))) != 1:
		// Taken by this browser after another one's look: refused all
		// the same.
		fail(http.StatusBadRequest, "This sign-in was started in another browser",
			"I can finish a sign-in only in the browser that opened my link.", a.newLink(p))
		return
	case !a.now().Before(st.ExpiresAt):
		fail(http.StatusBadRequest, "This sign-in took too long", fmt.Sprintf("A sign-in must come back within %d minutes.", int(ConsentTTL.Minutes())), a.newLink(p))
		return
	}
	if e := q.Get("error"); e != "" {
		if e == "access_denied" {
			fail(http.StatusForbidden, "Nothing was connected", fmt.Sprintf("You did not allow access to %s, so nothing changed.", p.Title()), "If that was a slip, ask for a new link: type "+a.commandFor(p)+" in Slack.")
			return
		}
		fail(http.StatusBadRequest, "The sign-in did not finish", fmt.Sprintf("%s answered %q, so nothing changed.", p.Title(), clip(e, 60)), a.newLink(p))
		return
	}
	verifier, _, err := a.cfg.Keyring.Open(st.Verifier, "verifier:"+st.ID)
	if err != nil {
		fail(http.StatusBadRequest, "This sign-in cannot be finished", "Its state was sealed under a key the bot no longer has.", a.newLink(p))
		return
	}
	grant, err := p.Exchange(a.client(ctx), q.Get("code"), string(verifier))
	var refusal *Refusal
	var rerr *oauth2.RetrieveError
	switch {
	case errors.As(err, &refusal):
		if grant.Token != nil {
			a.revoke(ctx, p, grant.Token)
		}
		fail(refusal.Status, "Nothing was connected", refusal.What, refusal.Fix)
		return
	case errors.As(err, &rerr):
		a.log.Warn("the code exchange was refused", "provider", name, "user", st.UserID, "code", rerr.ErrorCode)
		fail(http.StatusBadRequest, "The sign-in did not finish", fmt.Sprintf("%s refused to finish it (%s), so nothing changed.", p.Title(), clip(rerr.ErrorCode, 60)), a.newLink(p))
		return
	case err != nil:
		// The provider could not be reached, or answered garbage: not
		// the person's to fix.
		a.log.Warn("the code exchange failed", "provider", name, "user", st.UserID, "err", err)
		fail(http.StatusBadGateway, "The sign-in did not finish", fmt.Sprintf("I could not reach %s to finish it, so nothing changed.", p.Title()), "Try again in a minute. "+a.newLink(p))
		return
	}
	want, err := p.Expect(ctx, st.UserID)
	if err != nil {
		a.revoke(ctx, p, grant.Token)
		// Slack's users.info failed: the bot cannot check the account;
		// the person can only try again.
		a.log.Warn("cannot look up the account expected", "provider", name, "user", st.UserID, "err", err)
		fail(http.StatusBadGateway, "Nothing was connected", "I could not look up your Slack profile to check the account, so nothing changed.", "Try again in a minute. "+a.newLink(p))
		return
	}
	if !strings.EqualFold(grant.Account, want) {
		a.revoke(ctx, p, grant.Token)
		a.log.Info("refused the connection of another account", "provider", name, "user", st.UserID, "account", grant.Account, "want", want)
		what, fix := wrongAccount(p, grant.Account, want)
		fail(http.StatusForbidden, "That is another account", what, fix+" "+a.newLink(p))
		return
	}
	now := a.now()
	account := grant.Account
	if name == meetingbot.ProviderGoogle {
		account = strings.ToLower(account) // an email; a Slack user ID keeps its case
	}
	c := meetingbot.Connection{
		Provider: name, UserID: st.UserID, Account: account, Scopes: sortedScopes(grant.Scopes),
		State: meetingbot.ConnectionActive, CreatedAt: now, UpdatedAt: now,
	}
	if c.Token, err = a.seal(c, grant.Token); err == nil {
		err = a.cfg.Store.PutConnection(ctx, c)
	}
	if err != nil {
		a.revoke(ctx, p, grant.Token)
		a.log.Error("cannot keep a connection", "provider", name, "user", st.UserID, "err", err) // the store: the bot's fault
		fail(http.StatusServiceUnavailable, "Something went wrong on my side", "I could not keep the connection, so nothing changed.", "Try again in a minute. "+a.newLink(p))
		return
	}
	a.drop(c)
	a.log.Info("connected", "provider", name, "user", c.UserID, "account", c.Account)
	a.tell(ctx, c, func(h Hooks) func(context.Context, meetingbot.Connection) { return h.Connected })
	a.Count(ctx)
	who := c.Account
	if name == meetingbot.ProviderSlack {
		who = "your Slack user"
	}
	render(w, http.StatusOK, page{OK: true, Heading: "Connected " + who,
		What: fmt.Sprintf("Connected %s: you can close this tab.", who), Fix: connectedFix(p)})
}

func wrongAccount(p Provider, got, want string) (what, fix string) {
	if p.Name() == meetingbot.ProviderSlack {
		return "You signed in to Slack as another user than the one who asked for the link, so nothing was stored.", "Sign in as yourself, in the workspace the bot is in."
	}
	return fmt.Sprintf("You signed in to Google as %s, but your Slack profile's email is %s, so nothing was stored and the access was given back.", got, want),
		fmt.Sprintf("Start again and choose %s on Google's page (or sign out of %s first).", want, got)
}

func connectedFix(p Provider) string {
	if p.Name() == meetingbot.ProviderSlack {
		return "I'll set your Slack status while you are in a meeting."
	}
	return "Your reminders and agenda now read your calendar with this account."
}

// revoke gives a grant back, best effort: a grant refused is not kept,
// and must not stay live at the provider either.
func (a *Accounts) revoke(ctx context.Context, p Provider, tok *oauth2.Token) {
	if err := p.Revoke(a.client(ctx), tok); err != nil {
		a.log.Warn("cannot revoke a grant that was not kept", "provider", p.Name(), "err", err)
	}
}

func clearCookie(w http.ResponseWriter, name meetingbot.Provider) {
	http.SetCookie(w, &http.Cookie{Name: cookieName(name), Value: "", Path: "/" + string(name) + "/oauth/", MaxAge: -1, HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
}

func sortedScopes(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// clip cuts what a provider sent to n bytes, for a page.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
