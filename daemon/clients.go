package daemon

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/audit"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/cost"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/internal/outbound"
	"github.com/meetingbot/meetingbot/internal/retry"
	"github.com/meetingbot/meetingbot/mirror"
	"github.com/meetingbot/meetingbot/monitor"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/scheduler"
)

// The adapters provide what the engines consume.
var (
	_ scheduler.Source            = (*calendar.Source)(nil)
	_ scheduler.FreshSource       = (*mirror.Mirror)(nil)
	_ scheduler.Notifier          = (*notify.Slack)(nil)
	_ scheduler.Editor            = (*notify.Slack)(nil)
	_ scheduler.DestinationLookup = (*notify.Slack)(nil)
	_ audit.Source                = (*calendar.Source)(nil)
	_ audit.Slack                 = (*notify.Slack)(nil)
	_ mirror.Calendar             = calendar.Mirrored{}
	_ mirror.Push                 = calendar.Mirrored{}
)

// check checks the configuration against what can refuse it before
// anything starts: the Google credentials (without a request) and the
// Slack token (auth.test). A token Slack refuses stops the bot; Slack
// being unreachable is only logged. It makes the monitor, the cost model
// and the Slack clients, which the checks use.
func (b *Bot) check(ctx context.Context) error {
	b.mon = monitor.New(monitor.Options{Subscriptions: b.cfg.Subscriptions, Interval: b.cfg.TickInterval})
	b.spend = cost.NewSpend(b.cfg, clock.New(), b.mon, b.log) // what Calendar calls cost
	if b.cfg.HasServiceAccount() {
		if err := calendar.CheckCredentials(ctx, b.calendarConfig()); err != nil {
			return config.Rejected(err)
		}
	}
	b.slack = notify.New(notifyConfig(b.cfg, b.opts.SlackHTTP, b.log, b.mon.ObserveSlack))
	b.api = slackAPI(b.cfg, b.opts.SlackHTTP)
	check, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	if err := b.slack.Check(check); err != nil {
		if meetingbot.IsPermanent(err) {
			return err // it starts with what to do
		}
		b.log.Warn("Slack unreachable at start-up; reminders will retry", "err", err)
	}
	return nil
}

// calendarConfig is the Calendar client's configuration, its calls
// counted by the monitor and the cost model when there are some (not in
// bot audit).
func (b *Bot) calendarConfig() calendar.Config {
	cfg := b.cfg
	if b.mon == nil {
		return calendar.Config{
			CredentialsFile: cfg.CredentialsFile, CredentialsJSON: cfg.CredentialsJSON,
			Endpoint: cfg.GoogleEndpoint, Impersonate: cfg.Impersonate, Logger: b.log,
			ProjectQuota: cfg.CalendarQuota, UserQuota: cfg.CalendarUserQuota,
		}
	}
	return calendar.Config{
		HTTPClient:      b.opts.CalendarHTTP,
		CredentialsFile: cfg.CredentialsFile,
		CredentialsJSON: cfg.CredentialsJSON,
		Endpoint:        cfg.GoogleEndpoint,
		Impersonate:     cfg.Impersonate,
		Logger:          b.log,
		Observe:         b.spend.Observe(b.mon.ObserveCalendar),
		QuotaWait:       b.mon.ObserveQuotaWait,
		QuotaChanged:    cost.NewUsageLimits(cfg, b.mon, b.log).Changed,
		ProjectQuota:    cfg.CalendarQuota,
		UserQuota:       cfg.CalendarUserQuota,
	}
}

// notifyConfig is the Slack notifier's configuration for cfg: its
// requests carried by hc (the default client when nil), each outcome told
// to observe (nil: none).
func notifyConfig(cfg config.Config, hc *http.Client, log *slog.Logger, observe func(call string, class retry.Class)) notify.Config {
	return notify.Config{
		HTTPClient: hc,
		Token:      cfg.SlackToken,
		APIURL:     cfg.SlackAPIURL,
		JoinHosts:  cfg.JoinURLHosts,
		Logger:     log,
		Observe:    observe,
		// 0 turns the workspace's pacing off; notify's zero is its default.
		PostsPerMinute: cmp.Or(cfg.SlackPostsPerMinute, -1),
		// Self-service answers the snooze buttons' clicks.
		Snooze: cfg.SelfService(),
	}
}

// slackAPI is the slack-go client of self-service, of people's sign-ins
// and of the status engine's profile reads; hc, when set, carries its
// requests.
func slackAPI(cfg config.Config, hc *http.Client) *slack.Client {
	if hc == nil {
		hc = &http.Client{Timeout: slackCallTimeout}
	}
	opts := []slack.Option{slack.OptionAPIURL(cfg.SlackAPIURL), slack.OptionHTTPClient(outbound.Client(hc))}
	if cfg.SlackAppToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(cfg.SlackAppToken))
	}
	return slack.New(cfg.SlackToken, opts...)
}

// email returns a Slack user's profile email (users.info).
func (b *Bot) email(ctx context.Context, userID string) (string, error) {
	u, err := b.api.GetUserInfoContext(ctx, userID)
	if err != nil {
		return "", fmt.Errorf("users.info %s: %w", userID, err)
	}
	return u.Profile.Email, nil
}

// makeClients makes the Calendar client, reading with people's own
// accounts where they connected one, and has the notifier keep the
// channel names it finds in the store.
func (b *Bot) makeClients(ctx context.Context) error {
	ccfg := b.calendarConfig()
	if b.accounts != nil && b.cfg.GoogleConnect() {
		ccfg.Accounts = b.accounts // people's own accounts
	}
	source, err := calendar.New(ctx, ccfg)
	if err != nil {
		return config.Rejected(err)
	}
	b.source = source
	if email := source.ServiceAccountEmail(); email != "" && !b.cfg.Impersonate {
		b.log.Info("reading calendars as the service account; share each calendar with it", "service_account", email)
	}
	if b.share != nil {
		b.share = replicaShare(b.share, source, b.held)
	}
	b.keepChannelNames()
	return nil
}

// keepChannelNames makes the notifier keep the channel names it lists in
// the store, and says at start-up, once, that the #name destinations of
// CALENDARS cost a listing of the workspace's channels where a channel ID
// costs nothing. It says so at INFO, not WARN: the configuration is
// valid, and a deploy that works must log nothing an operator alerting on
// warnings is paged for.
func (b *Bot) keepChannelNames() {
	b.slack.KeepNames(b.store)
	var named []string
	seen := map[string]bool{}
	for _, s := range b.cfg.Subscriptions {
		if d := strings.TrimSpace(s.Destination); strings.HasPrefix(d, "#") && !seen[d] {
			seen[d] = true
			named = append(named, d)
		}
	}
	if len(named) > 0 {
		b.log.Info("CALENDARS names channels by #name: the bot finds each by listing the workspace's channels (conversations.list, "+
			"which Slack allows about 20 pages a minute; a large workspace takes minutes) and keeps what it found in its database; "+
			"a channel ID (C…, at the bottom of the channel's details in Slack) needs no listing and survives a rename",
			"channels", strings.Join(named, ","))
	}
}
