package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/internal/outbound"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/status"
)

// newStatuses returns the status engine and the status setter for cfg,
// or nils when people cannot connect their Slack user. ledger is the
// bot's: the statuses it recorded setting.
func newStatuses(cfg config.Config, conns *connections, ledger notify.StatusLedger, source func(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error), log *slog.Logger) (*status.Engine, *notify.Status) {
	if conns == nil || !cfg.SlackConnect() {
		return nil, nil
	}
	a := conns.accounts
	settings, _ := conns.store.(status.Settings)
	api := slack.New(cfg.SlackToken, slack.OptionAPIURL(cfg.SlackAPIURL), slack.OptionHTTPClient(outbound.Client(&http.Client{Timeout: slackCallTimeout})))
	eng := status.New(status.Config{
		Connections: conns.store,
		Settings:    settings,
		Email: func(ctx context.Context, userID string) (string, error) {
			u, err := api.GetUserInfoContext(ctx, userID)
			if err != nil {
				return "", err
			}
			return u.Profile.Email, nil
		},
		Logger: log,
	})
	set := notify.NewStatus(notify.StatusConfig{
		APIURL: cfg.SlackAPIURL,
		Token: func(ctx context.Context, userID string) (string, error) {
			ts, _, err := a.UserToken(ctx, meetingbot.ProviderSlack, userID)
			if err != nil {
				return "", err
			}
			tok, err := ts.Token()
			if err != nil {
				return "", err
			}
			return tok.AccessToken, nil
		},
		Meetings: source,
		Titles:   func(ctx context.Context, userID string) bool { return eng.Settings(ctx, userID).Titles },
		Ledger:   ledger,
		Revoked: func(ctx context.Context, userID string, err error) {
			a.Stop(ctx, meetingbot.ProviderSlack, userID)
		},
		Logger: log,
	})
	return eng, set
}
