package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
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
	"github.com/meetingbot/meetingbot/status"
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
	store    connect.Store
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
	cst, ok := st.(connect.Store)
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
	c := &connections{store: cst}
	acfg := connect.Config{
		Store: cst, Keyring: ring, PublicURL: cfg.PublicURL, Providers: providers,
		HTTPClient: outbound.Client(&http.Client{Timeout: 30 * time.Second}),
		Registerer: reg,
		Logger:     log,
		ReadOnly:   readOnly,
	}
	if c.accounts, err = connect.New(acfg); err != nil {
		return nil, err
	}
	if fromSlack != nil && !readOnly {
		c.accounts.Hook(connect.Hooks{Connected: fromSlack.app.Connected, Broken: fromSlack.app.Broken})
	}
	late.set(c.accounts)
	c.accounts.CheckKeysAndSay(ctx)
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
	return audit.PausedConnections(ps), nil
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

// sweptSubscriptions returns the subscriptions the scheduler sweeps with
// people's own accounts on: those made in Slack (made, nil for none) and
// the status ones (stat, nil for none), less those pauses leaves out. It
// tells mon every subscription swept, fixed (CALENDARS) included.
func sweptSubscriptions(made func(ctx context.Context) ([]meetingbot.Subscription, error), stat *status.Engine, pauses *connect.Pauses,
	fixed []meetingbot.Subscription, mon interface {
		Sweeping([]meetingbot.Subscription)
	}) func(ctx context.Context) ([]meetingbot.Subscription, error) {
	return func(ctx context.Context) ([]meetingbot.Subscription, error) {
		var subs []meetingbot.Subscription
		if made != nil {
			got, err := made(ctx)
			if err != nil {
				return nil, err
			}
			subs = got
		}
		if stat != nil {
			got, err := stat.Subscriptions(ctx)
			if err != nil {
				return nil, err
			}
			subs = append(subs, got...)
		}
		out, err := pauses.Swept(ctx, subs)
		if err != nil {
			return nil, err
		}
		mon.Sweeping(append(append([]meetingbot.Subscription{}, fixed...), out...))
		return out, nil
	}
}
