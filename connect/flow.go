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
	st, ok := a.takeState(w, r, p)
	if !ok {
		return
	}
	grant, ok := a.exchange(w, r, p, st)
	if !ok {
		return
	}
	a.keep(r.Context(), w, p, st, grant)
}

// fail renders the page of a sign-in that did not finish.
func fail(w http.ResponseWriter, status int, heading, what, fix string) {
	render(w, status, page{Heading: heading, What: what, Fix: fix})
}

// takeState checks the callback's state against the cookie of the browser
// that started the sign-in and takes it from the store, once. It returns
// false, with the page written, when the sign-in cannot go on.
func (a *Accounts) takeState(w http.ResponseWriter, r *http.Request, p Provider) (meetingbot.OAuthState, bool) {
	ctx, name := r.Context(), p.Name()
	cookie, err := r.Cookie(cookieName(name))
	if err != nil || cookie.Value == "" {
		fail(w, http.StatusBadRequest, "This sign-in was started in another browser",
			"I can finish a sign-in only in the browser that opened my link.", "Open the link from Slack in this browser. "+a.newLink(p))
		return meetingbot.OAuthState{}, false
	}
	state := r.URL.Query().Get("state")
	if state == "" {
		clearCookie(w, name)
		fail(w, http.StatusBadRequest, "This page is not a sign-in I started", "It came without the state I sent.", a.newLink(p))
		return meetingbot.OAuthState{}, false
	}
	// The state is looked at before it is taken: a callback from another
	// browser (which carries another cookie, or a link passed on) must
	// leave the sign-in for the browser that started it.
	st, ok, err := a.cfg.Store.OAuthState(ctx, hash(state))
	if err == nil && ok && st.Step == meetingbot.OAuthConsent && st.Provider == name &&
		subtle.ConstantTimeCompare([]byte(st.Binding), []byte(hash(cookie.Value))) != 1 {
		a.log.Warn("a consent came back to another browser than the one that started it: refused, and left to that browser", "provider", name, "user", st.UserID)
		fail(w, http.StatusBadRequest, "This sign-in was started in another browser",
			"I can finish a sign-in only in the browser that opened my link.", "Open the link from Slack in the browser you use, or ask for a new one: type "+a.commandFor(p)+" in Slack.")
		return meetingbot.OAuthState{}, false
	}
	clearCookie(w, name)
	if err == nil && ok {
		st, ok, err = a.cfg.Store.TakeOAuthState(ctx, hash(state))
	}
	switch {
	case err != nil:
		// The store failed: the bot's fault, not the person's.
		a.log.Error("cannot take a consent's state", "provider", name, "err", err)
		fail(w, http.StatusServiceUnavailable, "Something went wrong on my side", "I could not read the sign-in's state.", a.newLink(p))
		return meetingbot.OAuthState{}, false
	case !ok || st.Step != meetingbot.OAuthConsent || st.Provider != name:
		fail(w, http.StatusBadRequest, "This sign-in was finished already", "Each sign-in finishes once, and this one has come back before (or it is not one I started).", a.newLink(p))
		return meetingbot.OAuthState{}, false
	case subtle.ConstantTimeCompare([]byte(st.Binding), []byte(hash(cookie.Value))) != 1:
		// Taken by this browser after another one's look: refused all
		// the same.
		fail(w, http.StatusBadRequest, "This sign-in was started in another browser",
			"I can finish a sign-in only in the browser that opened my link.", a.newLink(p))
		return meetingbot.OAuthState{}, false
	case !a.now().Before(st.ExpiresAt):
		fail(w, http.StatusBadRequest, "This sign-in took too long", fmt.Sprintf("A sign-in must come back within %d minutes.", int(ConsentTTL.Minutes())), a.newLink(p))
		return meetingbot.OAuthState{}, false
	}
	return st, true
}

// exchange reads the provider's answer to the consent of st and
// exchanges its code for a grant. It returns false, with the page
// written, when the person declined or the provider refused.
func (a *Accounts) exchange(w http.ResponseWriter, r *http.Request, p Provider, st meetingbot.OAuthState) (Grant, bool) {
	ctx, name, q := r.Context(), p.Name(), r.URL.Query()
	if e := q.Get("error"); e != "" {
		if e == "access_denied" {
			fail(w, http.StatusForbidden, "Nothing was connected", fmt.Sprintf("You did not allow access to %s, so nothing changed.", p.Title()), "If that was a slip, ask for a new link: type "+a.commandFor(p)+" in Slack.")
			return Grant{}, false
		}
		fail(w, http.StatusBadRequest, "The sign-in did not finish", fmt.Sprintf("%s answered %q, so nothing changed.", p.Title(), clip(e, 60)), a.newLink(p))
		return Grant{}, false
	}
	verifier, _, err := a.cfg.Keyring.Open(st.Verifier, "verifier:"+st.ID)
	if err != nil {
		fail(w, http.StatusBadRequest, "This sign-in cannot be finished", "Its state was sealed under a key the bot no longer has.", a.newLink(p))
		return Grant{}, false
	}
	grant, err := p.Exchange(a.client(ctx), q.Get("code"), string(verifier))
	var refusal *Refusal
	var rerr *oauth2.RetrieveError
	switch {
	case errors.As(err, &refusal):
		if grant.Token != nil {
			a.giveBack(ctx, p, grant)
		}
		fail(w, refusal.Status, "Nothing was connected", refusal.What, refusal.Fix)
		return Grant{}, false
	case errors.As(err, &rerr):
		a.log.Warn("the code exchange was refused", "provider", name, "user", st.UserID, "code", rerr.ErrorCode)
		fail(w, http.StatusBadRequest, "The sign-in did not finish", fmt.Sprintf("%s refused to finish it (%s), so nothing changed.", p.Title(), clip(rerr.ErrorCode, 60)), a.newLink(p))
		return Grant{}, false
	case err != nil:
		// The provider could not be reached, or answered garbage: not
		// the person's to fix.
		a.log.Warn("the code exchange failed", "provider", name, "user", st.UserID, "err", err)
		fail(w, http.StatusBadGateway, "The sign-in did not finish", fmt.Sprintf("I could not reach %s to finish it, so nothing changed.", p.Title()), "Try again in a minute. "+a.newLink(p))
		return Grant{}, false
	}
	return grant, true
}

// keep checks that grant is of the account st's person expects, keeps it
// sealed, tells the hooks and says so.
func (a *Accounts) keep(ctx context.Context, w http.ResponseWriter, p Provider, st meetingbot.OAuthState, grant Grant) {
	name := p.Name()
	want, err := p.Expect(ctx, st.UserID)
	if err != nil {
		// Slack's users.info failed: the bot cannot check the account;
		// the person can only try again, and the grant, which may be a
		// working connection's, stays.
		a.log.Warn("cannot look up the account expected", "provider", name, "user", st.UserID, "err", err)
		fail(w, http.StatusBadGateway, "Nothing was connected", "I could not look up your Slack profile to check the account, so nothing changed.", "Try again in a minute. "+a.newLink(p))
		return
	}
	if !strings.EqualFold(grant.Account, want) {
		gaveBack := a.giveBack(ctx, p, grant)
		a.log.Info("refused the connection of another account", "provider", name, "user", st.UserID, "account", grant.Account, "want", want)
		what, fix := wrongAccount(p, grant.Account, want, gaveBack)
		fail(w, http.StatusForbidden, "That is another account", what, fix+" "+a.newLink(p))
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
		// The store failed: a transient fault, and the grant may be the
		// one a working connection reads with; it stays.
		a.log.Error("cannot keep a connection", "provider", name, "user", st.UserID, "err", err) // the store: the bot's fault
		fail(w, http.StatusServiceUnavailable, "Something went wrong on my side", "I could not keep the connection, so nothing changed.", "Try again in a minute. "+a.newLink(p))
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

func wrongAccount(p Provider, got, want string, gaveBack bool) (what, fix string) {
	if p.Name() == meetingbot.ProviderSlack {
		return "You signed in to Slack as another user than the one who asked for the link, so nothing was stored.", "Sign in as yourself, in the workspace the bot is in."
	}
	what = fmt.Sprintf("You signed in to Google as %s, but your Slack profile's email is %s, so nothing was stored", got, want)
	if gaveBack {
		what += " and the access was given back."
	} else {
		what += "; the connection of " + got + " here, if it has one, is unchanged."
	}
	return what, fmt.Sprintf("Start again and choose %s on Google's page (or sign out of %s first).", want, got)
}

func connectedFix(p Provider) string {
	if p.Name() == meetingbot.ProviderSlack {
		return "I'll set your Slack status while you are in a meeting."
	}
	return "Your reminders and agenda now read your calendar with this account."
}

// giveBack revokes a grant the bot refused, best effort, unless its
// account has a connection here: a provider keeps one grant per account
// and app (Google: "the new access token also represents any
// authorizations that the user previously granted", and a revocation of
// any token ends them all; Slack hands a person who authorizes again the
// same token), so revoking a refused sign-in of a connected account would
// stop that connection. It reports whether it revoked. A store that cannot
// tell keeps the grant too.
func (a *Accounts) giveBack(ctx context.Context, p Provider, grant Grant) bool {
	account := grant.Account
	if p.Name() == meetingbot.ProviderGoogle {
		account = strings.ToLower(account)
	}
	if account != "" {
		_, connected, err := a.cfg.Store.ConnectionOf(ctx, p.Name(), account)
		if err != nil || connected {
			a.log.Info("a refused sign-in's grant is kept live: its account has a connection here, or the store cannot tell", "provider", p.Name(), "account", account, "err", err)
			return false
		}
	}
	a.revoke(ctx, p, grant.Token)
	return true
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
