package daemon

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/connect"
	"github.com/meetingbot/meetingbot/internal/keyring"
	"github.com/meetingbot/meetingbot/internal/outbound"
	"github.com/meetingbot/meetingbot/selfservice"
)

// The accounts provide what the calendar and self-service consume.
var (
	_ calendar.Accounts    = (*connect.Accounts)(nil)
	_ selfservice.Accounts = (*connect.Accounts)(nil)
)

// connectAccounts makes people's own accounts (package connect) when cfg
// lets them connect any: their tokens, sealed under TOKEN_ENCRYPTION_KEY,
// are checked against it at once, and with answers from Slack on the
// notifier gives their DM reminders Going / Maybe / No.
func (b *Bot) connectAccounts(ctx context.Context) error {
	a, err := b.accountsFor(ctx, b.mon.Registerer(), false)
	if err != nil || a == nil {
		return err
	}
	b.accounts = a
	a.CheckKeysAndSay(ctx)
	if b.cfg.GoogleConnect() && b.cfg.SelfService() {
		// Self-service answers the clicks (rsvp).
		b.slack.AnswerFor(func(ctx context.Context, calendarID string) bool {
			_, err := a.Owner(ctx, calendarID)
			return err == nil
		})
	}
	return nil
}

// accountsFor makes the accounts of cfg, nil when people cannot connect
// any; readOnly for bot audit, which changes nothing the live bot keeps
// (connect.Config.ReadOnly). The meetingbot_connections gauge goes to reg.
func (b *Bot) accountsFor(ctx context.Context, reg prometheus.Registerer, readOnly bool) (*connect.Accounts, error) {
	if !b.cfg.GoogleConnect() && !b.cfg.SlackConnect() {
		return nil, nil
	}
	ring, err := keyring.Parse(b.cfg.TokenKeys)
	if err != nil {
		return nil, config.Rejected(fmt.Errorf("TOKEN_ENCRYPTION_KEY: %w", err))
	}
	providers, err := b.providers(ctx)
	if err != nil {
		return nil, err
	}
	return connect.New(connect.Config{
		Store: b.store, Keyring: ring, PublicURL: b.cfg.PublicURL, Providers: providers,
		HTTPClient: outbound.Client(&http.Client{Timeout: 30 * time.Second}),
		Registerer: reg,
		Logger:     b.log,
		ReadOnly:   readOnly,
	})
}

// providers makes the sign-in providers cfg turns on. The Slack one
// refuses a grant for another workspace than the bot's (auth.test's
// team_id).
func (b *Bot) providers(ctx context.Context) ([]connect.Provider, error) {
	var out []connect.Provider
	cfg := b.cfg
	if cfg.GoogleConnect() {
		g, err := connect.NewGoogle(connect.GoogleConfig{
			Client: connect.GoogleClient{
				ID: cfg.GoogleOAuth.ID, Secret: cfg.GoogleOAuth.Secret,
				AuthURI: cfg.GoogleOAuth.AuthURI, TokenURI: cfg.GoogleOAuth.TokenURI,
			},
			RedirectURI: cfg.GoogleRedirectURI(),
			Email:       b.email,
		})
		if err != nil {
			return nil, config.Rejected(err)
		}
		if !cfg.GoogleOAuth.Registers(cfg.GoogleRedirectURI()) {
			b.log.Warn("GOOGLE_OAUTH_CLIENT_JSON does not list the redirect URI, so Google will refuse people's sign-ins (redirect_uri_mismatch): add it to the client (Google Auth Platform > Clients > the client > Authorized redirect URIs)",
				"redirect_uri", cfg.GoogleRedirectURI())
		}
		b.log.Info("people connect their own Google accounts: /meetingbot connect; Google sends them back to the redirect URI, which must reach HTTP_ADDR", "redirect_uri", cfg.GoogleRedirectURI())
		out = append(out, g)
	}
	if cfg.SlackConnect() {
		s, err := b.slackProvider(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// slackProvider makes the Slack sign-in of people's status, which knows
// the bot's workspace from auth.test.
func (b *Bot) slackProvider(ctx context.Context) (*connect.Slack, error) {
	cfg := b.cfg
	team := func(ctx context.Context) (string, error) {
		who, err := b.api.AuthTestContext(ctx)
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
		b.log.Warn("auth.test did not answer: each Slack connection asks it again, and is refused until it answers", "err", err)
	}
	cancel()
	s, err := connect.NewSlack(connect.SlackConfig{
		ClientID: cfg.SlackClientID, ClientSecret: cfg.SlackClientSecret, APIURL: cfg.SlackAPIURL,
		RedirectURI: cfg.SlackRedirectURI(), TeamID: id, Team: team,
		HTTPClient: outbound.Client(&http.Client{Timeout: slackCallTimeout}),
	})
	if err != nil {
		return nil, config.Rejected(err)
	}
	b.log.Info("people let the bot set their Slack status: /meetingbot status on; Slack sends them back to the redirect URL, which the app lists and must reach HTTP_ADDR", "redirect_uri", cfg.SlackRedirectURI())
	return s, nil
}

// madeInSlack returns the subscriptions people made from Slack, for the
// scheduler, and tells the monitor which subscriptions are swept now.
func (b *Bot) madeInSlack(ctx context.Context) ([]meetingbot.Subscription, error) {
	out, err := b.slackSubscriptions(ctx)
	if err != nil {
		return nil, err
	}
	b.mon.Sweeping(append(append([]meetingbot.Subscription{}, b.cfg.Subscriptions...), out...))
	return out, nil
}

// slackSubscriptions returns the subscriptions people made from Slack.
func (b *Bot) slackSubscriptions(ctx context.Context) ([]meetingbot.Subscription, error) {
	made, err := b.store.SlackSubscriptions(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]meetingbot.Subscription, 0, len(made))
	for _, sub := range made {
		if s := sub.Subscription(); s.Reminds() { // a channel that only follows changes or agendas has no reminders to sweep
			out = append(out, s)
		}
	}
	return out, nil
}

// swept returns the subscriptions the scheduler sweeps with people's own
// accounts on: those made in Slack and the status ones, less those the
// pauses leave out until their person connects (again). It tells the
// monitor every subscription swept, CALENDARS' included.
func (b *Bot) swept(pauses *connect.Pauses) func(ctx context.Context) ([]meetingbot.Subscription, error) {
	return func(ctx context.Context) ([]meetingbot.Subscription, error) {
		var subs []meetingbot.Subscription
		if b.cfg.SelfService() {
			got, err := b.slackSubscriptions(ctx)
			if err != nil {
				return nil, err
			}
			subs = got
		}
		if b.statuses != nil {
			got, err := b.statuses.Subscriptions(ctx)
			if err != nil {
				return nil, err
			}
			subs = append(subs, got...)
		}
		out, err := pauses.Swept(ctx, subs)
		if err != nil {
			return nil, err
		}
		b.mon.Sweeping(append(append([]meetingbot.Subscription{}, b.cfg.Subscriptions...), out...))
		return out, nil
	}
}
