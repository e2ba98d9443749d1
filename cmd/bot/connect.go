package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/slack-go/slack"
	"golang.org/x/oauth2"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/audit"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/connect"
	"github.com/meetingbot/meetingbot/internal/keyring"
	"github.com/meetingbot/meetingbot/internal/outbound"
	"github.com/meetingbot/meetingbot/selfservice"
	"github.com/meetingbot/meetingbot/storage/postgres"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// People's own accounts (package connect) as the bot wires them: the
// flow's endpoints on HTTP_ADDR, the tokens the calendar reads with, the
// DMs and Home tab of self-service, the push channels stopped on
// disconnection, the start-up check of TOKEN_ENCRYPTION_KEY and the
// meetingbot_connections gauge.

// Both stores keep connections, and the adapters provide what the
// connections consume.
var (
	_ connect.Store        = (*sqlite.Store)(nil)
	_ connect.Store        = (*postgres.Store)(nil)
	_ calendar.Accounts    = (*connect.Accounts)(nil)
	_ selfservice.Accounts = (*connect.Accounts)(nil)
)

// lateAccounts is the calendar source's Accounts before the store is
// open: the source is built first, to check the credentials before
// anything else starts, and reads no calendar until the accounts are set.
type lateAccounts struct {
	enabled map[meetingbot.Provider]bool
	mu      sync.Mutex
	a       *connect.Accounts
}

func (l *lateAccounts) set(a *connect.Accounts) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.a = a
}

func (l *lateAccounts) get() *connect.Accounts {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.a
}

func (l *lateAccounts) Account(ctx context.Context, calendarID string) (oauth2.TokenSource, string, error) {
	if a := l.get(); a != nil {
		return a.Account(ctx, calendarID)
	}
	return nil, "", meetingbot.ErrNotConnected
}

func (l *lateAccounts) Renew(connection string) {
	if a := l.get(); a != nil {
		a.Renew(connection)
	}
}

func (l *lateAccounts) Refused(ctx context.Context, connection string, err error) {
	if a := l.get(); a != nil {
		a.Refused(ctx, connection, err)
	}
}

// accountsFor returns the late Accounts for cfg: nil when people cannot
// connect their own accounts.
func accountsFor(cfg config.Config) *lateAccounts {
	if !cfg.GoogleConnect() && !cfg.SlackConnect() {
		return nil
	}
	return &lateAccounts{enabled: map[meetingbot.Provider]bool{meetingbot.ProviderGoogle: cfg.GoogleConnect(), meetingbot.ProviderSlack: cfg.SlackConnect()}}
}

// connections is people's own accounts for a serving bot.
type connections struct {
	accounts *connect.Accounts
	store    connectionStore
	gauge    *prometheus.GaugeVec
	log      *slog.Logger
}

// connectionStore is what the connections need of the bot's store.
type connectionStore interface {
	connect.Store
	Channels(ctx context.Context) ([]meetingbot.PushChannel, error)
	DeleteChannel(ctx context.Context, id string) error
}

// newConnections wires people's own Google accounts for cfg, or returns
// nil when cfg leaves them off. It tells late (the calendar source's
// Accounts), checks TOKEN_ENCRYPTION_KEY against the stored tokens and
// logs what it cannot read.
func newConnections(ctx context.Context, cfg config.Config, st store, source *calendar.Source, fromSlack *selfService, late *lateAccounts, reg prometheus.Registerer, log *slog.Logger) (*connections, error) {
	return wireConnections(ctx, cfg, st, source, fromSlack, late, reg, false, log)
}

// wireConnections is newConnections, read-only for bot audit: the
// connections are read and nothing stored is changed (see
// connect.Config.ReadOnly).
func wireConnections(ctx context.Context, cfg config.Config, st store, source *calendar.Source, fromSlack *selfService, late *lateAccounts, reg prometheus.Registerer, readOnly bool, log *slog.Logger) (*connections, error) {
	if late == nil {
		return nil, nil
	}
	cst, ok := st.(connectionStore)
	if !ok {
		return nil, errors.New("connect: the store keeps no connections")
	}
	ring, err := keyring.Parse(cfg.TokenKeys)
	if err != nil {
		return nil, rejectedConfig{fmt.Errorf("TOKEN_ENCRYPTION_KEY: %w", err)}
	}
	api := slack.New(cfg.SlackToken,
		slack.OptionAPIURL(cfg.SlackAPIURL),
		slack.OptionHTTPClient(outbound.Client(&http.Client{Timeout: slackCallTimeout})))
	providers, err := providersFor(ctx, cfg, api, log)
	if err != nil {
		return nil, err
	}
	c := &connections{store: cst, log: log, gauge: prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "meetingbot_connections",
		Help: "People's own connected accounts, by state: active ones are read with, broken ones (a revoked or expired grant) wait for their person to reconnect.",
	}, []string{"state"})}
	if err := reg.Register(c.gauge); err != nil {
		return nil, err
	}
	acfg := connect.Config{
		Store: cst, Keyring: ring, PublicURL: cfg.PublicURL, Providers: providers,
		HTTPClient: outbound.Client(&http.Client{Timeout: 30 * time.Second}),
		Logger:     log,
		ReadOnly:   readOnly,
	}
	if !readOnly {
		acfg.Disconnecting = func(ctx context.Context, conn meetingbot.Connection) {
			stopChannels(ctx, cst, source, conn.Account, log)
		}
	}
	if fromSlack != nil && !readOnly {
		acfg.Connected = func(ctx context.Context, conn meetingbot.Connection) {
			fromSlack.app.Connected(ctx, conn)
			c.count(ctx)
		}
		acfg.Broken = func(ctx context.Context, conn meetingbot.Connection) {
			fromSlack.app.Broken(ctx, conn)
			c.count(ctx)
		}
	}
	if c.accounts, err = connect.New(acfg); err != nil {
		return nil, err
	}
	late.set(c.accounts)
	r, err := c.accounts.CheckKeys(ctx)
	switch {
	case err != nil:
		log.Warn("cannot check the stored tokens against TOKEN_ENCRYPTION_KEY", "err", err)
	case r.Unreadable > 0:
		log.Error(fmt.Sprintf("TOKEN_ENCRYPTION_KEY cannot decrypt %d of the %d stored connections: put the key they were sealed with back in TOKEN_ENCRYPTION_KEY, after the new one (e.g. TOKEN_ENCRYPTION_KEY=<new>,<old>), and restart; meanwhile each of them stops when the bot needs its token, and its person is asked to reconnect (one DM), their reminders read with the service account where it can, else paused", r.Unreadable, r.Connections),
			"unreadable", r.Unreadable, "connections", r.Connections)
	case r.Resealed > 0:
		log.Info("connections sealed under an old key were sealed again under the first key of TOKEN_ENCRYPTION_KEY", "resealed", r.Resealed, "connections", r.Connections)
	case r.Stale > 0:
		log.Info("connections sealed under an old key of TOKEN_ENCRYPTION_KEY: the bot seals them again under the first at its start", "stale", r.Stale, "connections", r.Connections)
	}
	c.count(ctx)
	return c, nil
}

// providersFor builds the providers cfg turns on. The Slack one refuses a
// grant for another workspace than the bot's (auth.test's team_id).
func providersFor(ctx context.Context, cfg config.Config, api *slack.Client, log *slog.Logger) ([]connect.Provider, error) {
	var out []connect.Provider
	if cfg.GoogleConnect() {
		g, err := connect.NewGoogle(connect.GoogleConfig{
			Client: connect.GoogleClient{
				ID: cfg.GoogleOAuth.ID, Secret: cfg.GoogleOAuth.Secret,
				AuthURI: cfg.GoogleOAuth.AuthURI, TokenURI: cfg.GoogleOAuth.TokenURI,
			},
			RedirectURI: cfg.GoogleRedirectURI(),
			Email: func(ctx context.Context, userID string) (string, error) {
				u, err := api.GetUserInfoContext(ctx, userID)
				if err != nil {
					return "", fmt.Errorf("users.info %s: %w", userID, err)
				}
				return u.Profile.Email, nil
			},
		})
		if err != nil {
			return nil, rejectedConfig{err}
		}
		if !cfg.GoogleOAuth.Registers(cfg.GoogleRedirectURI()) {
			log.Warn("GOOGLE_OAUTH_CLIENT_JSON does not list the redirect URI, so Google will refuse people's sign-ins (redirect_uri_mismatch): add it to the client (Google Auth Platform > Clients > the client > Authorized redirect URIs)",
				"redirect_uri", cfg.GoogleRedirectURI())
		}
		log.Info("people connect their own Google accounts: /meetingbot connect; Google sends them back to the redirect URI, which must reach HTTP_ADDR", "redirect_uri", cfg.GoogleRedirectURI())
		out = append(out, g)
	}
	if cfg.SlackConnect() {
		team := func(ctx context.Context) (string, error) {
			who, err := api.AuthTestContext(ctx)
			if err != nil {
				return "", fmt.Errorf("auth.test: %w", err)
			}
			return who.TeamID, nil
		}
		id := ""
		check, cancel := context.WithTimeout(ctx, checkTimeout)
		if got, err := team(check); err == nil {
			id = got
		} else {
			log.Warn("auth.test did not answer: each Slack connection asks it again, and is refused until it answers", "err", err)
		}
		cancel()
		s, err := connect.NewSlack(connect.SlackConfig{
			ClientID: cfg.SlackClientID, ClientSecret: cfg.SlackClientSecret, APIURL: cfg.SlackAPIURL,
			RedirectURI: cfg.SlackRedirectURI(), TeamID: id, Team: team,
			HTTPClient: outbound.Client(&http.Client{Timeout: slackCallTimeout}),
		})
		if err != nil {
			return nil, rejectedConfig{err}
		}
		log.Info("people let the bot set their Slack status: /meetingbot status on; Slack sends them back to the redirect URL, which the app lists and must reach HTTP_ADDR", "redirect_uri", cfg.SlackRedirectURI())
		out = append(out, s)
	}
	return out, nil
}

// count refreshes the gauge from the store.
func (c *connections) count(ctx context.Context) {
	counts, err := c.accounts.Counts(ctx)
	if err != nil {
		c.log.Warn("cannot count the connections", "err", err)
		return
	}
	totals := map[meetingbot.ConnectionState]int{meetingbot.ConnectionActive: 0, meetingbot.ConnectionBroken: 0}
	for _, byState := range counts {
		for s, n := range byState {
			totals[s] += n
		}
	}
	for s, n := range totals {
		c.gauge.WithLabelValues(string(s)).Set(float64(n))
	}
}

// run refreshes the gauge every interval until ctx ends: another replica
// may have connected or lost some.
func (c *connections) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.count(ctx)
		}
	}
}

// mount serves the flow, GET /google/oauth/start and /callback, on the
// HTTP_ADDR server (the first of servers).
func (c *connections) mount(servers []*httpServer) {
	srv := servers[0]
	mux := http.NewServeMux()
	for _, p := range []meetingbot.Provider{meetingbot.ProviderGoogle, meetingbot.ProviderSlack} {
		if c.accounts.Enabled(p) {
			mux.Handle("/"+string(p)+"/oauth/", c.accounts.Handler())
			srv.what += fmt.Sprintf(" and the %s sign-in of people's own accounts (%s, %s)", p, connect.StartPath(p), connect.CallbackPath(p))
		}
	}
	mux.Handle("/", srv.srv.Handler)
	srv.srv.Handler = mux
}

// stopChannels stops the push channels open on calendarID, with the
// token that opened them (the person's, still connected), and forgets
// them: Google lets only the identity that opened a channel stop it.
func stopChannels(ctx context.Context, st connectionStore, source *calendar.Source, calendarID string, log *slog.Logger) {
	chs, err := st.Channels(ctx)
	if err != nil {
		log.Warn("cannot list the push channels to stop", "calendar", calendarID, "err", err)
		return
	}
	for _, ch := range chs {
		if !strings.EqualFold(ch.CalendarID, calendarID) {
			continue
		}
		if err := source.StopChannel(ctx, ch.CalendarID, ch.ID, ch.ResourceID); err != nil {
			log.Warn("cannot stop a push channel of a calendar being disconnected; it ends at its expiration", "calendar", ch.CalendarID, "channel", ch.ID, "err", err)
		}
		if err := st.DeleteChannel(ctx, ch.ID); err != nil {
			log.Warn("cannot forget a stopped push channel", "calendar", ch.CalendarID, "channel", ch.ID, "err", err)
		}
	}
}

// pausedConnections lists, for bot audit, the connections that stopped
// and the subscriptions each pauses until its person reconnects: those on
// a stopped Google account's calendar, the status one of a stopped Slack
// user. st is the audit's store.
func pausedConnections(st interface {
	Connections(ctx context.Context) ([]meetingbot.Connection, error)
	SlackSubscriptions(ctx context.Context) ([]meetingbot.SlackSubscription, error)
}) audit.PausedReader {
	return func(ctx context.Context) ([]audit.Paused, error) {
		conns, err := st.Connections(ctx)
		if err != nil {
			return nil, err
		}
		var subs []meetingbot.SlackSubscription
		for _, c := range conns {
			if c.Provider == meetingbot.ProviderGoogle && c.State == meetingbot.ConnectionBroken {
				if subs, err = st.SlackSubscriptions(ctx); err != nil {
					return nil, err
				}
				break
			}
		}
		var out []audit.Paused
		for _, c := range conns {
			if c.State != meetingbot.ConnectionBroken {
				continue
			}
			p := audit.Paused{Provider: string(c.Provider), Account: c.Account, UserID: c.UserID, Since: c.UpdatedAt.UTC(), Reason: c.Reason, Subscriptions: []string{}}
			switch c.Provider {
			case meetingbot.ProviderGoogle:
				for _, s := range subs {
					if strings.EqualFold(s.CalendarID, c.Account) {
						p.Subscriptions = append(p.Subscriptions, s.ID)
					}
				}
			case meetingbot.ProviderSlack:
				p.Subscriptions = append(p.Subscriptions, meetingbot.StatusSubscription(c.UserID))
			}
			out = append(out, p)
		}
		return out, nil
	}
}

// Enabled says which providers cfg turned on, before the accounts are.
func (l *lateAccounts) Enabled(p meetingbot.Provider) bool { return l.enabled[p] }

// Link, Connection and Disconnect serve self-service, which is built
// before the accounts too.
func (l *lateAccounts) Link(ctx context.Context, p meetingbot.Provider, userID string) (string, error) {
	if a := l.get(); a != nil {
		return a.Link(ctx, p, userID)
	}
	return "", errors.New("connect: starting")
}

func (l *lateAccounts) Connection(ctx context.Context, p meetingbot.Provider, userID string) (meetingbot.Connection, bool, error) {
	if a := l.get(); a != nil {
		return a.Connection(ctx, p, userID)
	}
	return meetingbot.Connection{}, false, nil
}

func (l *lateAccounts) Disconnect(ctx context.Context, p meetingbot.Provider, userID string) (meetingbot.Connection, bool, error) {
	if a := l.get(); a != nil {
		return a.Disconnect(ctx, p, userID)
	}
	return meetingbot.Connection{}, false, errors.New("connect: starting")
}

// auditConnections lets bot audit read connected calendars with their
// people's own accounts, read-only (it changes no connection of the live
// bot's), and returns what lists the reminders paused by a stopped
// connection; nil when people cannot connect accounts.
func auditConnections(ctx context.Context, cfg config.Config, ledger any, source *calendar.Source, late *lateAccounts, log *slog.Logger) (audit.PausedReader, error) {
	if late == nil {
		return nil, nil
	}
	st, ok := ledger.(store)
	if !ok {
		return nil, nil
	}
	if _, err := wireConnections(ctx, cfg, st, source, nil, late, prometheus.NewRegistry(), true, log); err != nil {
		return nil, err
	}
	ps, ok := ledger.(interface {
		Connections(ctx context.Context) ([]meetingbot.Connection, error)
		SlackSubscriptions(ctx context.Context) ([]meetingbot.SlackSubscription, error)
	})
	if !ok {
		return nil, nil
	}
	return pausedConnections(ps), nil
}

func (l *lateAccounts) Forget(ctx context.Context, p meetingbot.Provider, userID string) (bool, error) {
	if a := l.get(); a != nil {
		return a.Forget(ctx, p, userID)
	}
	return false, nil
}

func (l *lateAccounts) ForgetAll(ctx context.Context, p meetingbot.Provider) (int, error) {
	if a := l.get(); a != nil {
		return a.ForgetAll(ctx, p)
	}
	return 0, nil
}
