package daemon

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/slack-go/slack/socketmode"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/connect"
	"github.com/meetingbot/meetingbot/internal/outbound"
	"github.com/meetingbot/meetingbot/selfservice"
)

// The adapters provide what self-service consumes.
var _ selfservice.Calendars = upcoming{}

// makeSelfService makes self-service from Slack as the configuration
// turns it on (config.Config.SelfService): the App, Slack's request URLs
// under /slack/ with SLACK_SIGNING_SECRET, and Socket Mode with
// SLACK_APP_TOKEN. It hears of people's connections made and broken, for
// their DMs and Home tab.
func (b *Bot) makeSelfService() error {
	cfg := b.cfg
	if !cfg.SelfService() {
		return nil
	}
	fixed := make([]selfservice.Fixed, len(cfg.Subscriptions))
	for i, s := range cfg.Subscriptions {
		fixed[i] = selfservice.Fixed{ID: s.ID, CalendarID: s.CalendarID, Destination: s.Destination, Offsets: s.Offsets}
	}
	scfg := selfservice.Config{
		Store:          b.store,
		Calendars:      upcoming{b.source},
		Slack:          b.api,
		DefaultOffsets: cfg.Offsets,
		// An offset a sweep could miss is refused, as in REMINDER_OFFSETS.
		Limits:   selfservice.Limits{Tick: cfg.TickInterval, StartGrace: meetingbot.StartGrace, Max: config.MaxOffset},
		Admins:   cfg.SlackAdmins,
		Operator: fixed,
		Access: selfservice.Access{
			ServiceAccount: b.source.ServiceAccountEmail(),
			ClientID:       b.source.ServiceAccountClientID(),
			Impersonate:    cfg.Impersonate,
		},
		BotUserID: b.slack.BotUserID(),
		Logger:    b.log,
		Refused:   func(r selfservice.Refusal) { b.mon.SlackRefused(string(r)) },
		// response_urls are Slack's (hooks.slack.com); the same limits as
		// every other call to Slack.
		HTTPClient: outbound.Client(&http.Client{Timeout: 10 * time.Second}),
	}
	if b.snoozes != nil {
		scfg.Snoozes = b.snoozes // the snooze buttons
	}
	if b.accounts != nil {
		scfg.Accounts = b.accounts // people's own accounts
		scfg.StatusSettings = b.store
	}
	if b.answers != nil {
		scfg.Answers = b.answers // Going / Maybe / No
		scfg.Invites = b.store
	}
	app, err := selfservice.New(scfg)
	if err != nil {
		return fmt.Errorf("self-service: %w", err)
	}
	b.app = app
	if cfg.SlackSigningSecret != "" {
		if b.handler, err = app.Handler(cfg.SlackSigningSecret); err != nil {
			return fmt.Errorf("self-service: %w", err)
		}
	}
	if cfg.SlackAppToken != "" {
		b.socket = socketmode.New(b.api)
	}
	if b.accounts != nil {
		b.accounts.Hook(connect.Hooks{Connected: app.Connected, Broken: app.Broken})
	}
	return nil
}

// upcoming reads the calendars people connect from Slack through the
// bot's Calendar source, with the filters reminders use.
type upcoming struct{ source *calendar.Source }

// Upcoming returns up to limit meetings of calendarID, as reader reads
// it (meetingbot.Subscription.Reader), starting in [from, to), earliest
// first, a private one titled "Private meeting" as its
// reminders show it; calendar errors keep their Permanent mark.
func (u upcoming) Upcoming(ctx context.Context, calendarID, reader string, from, to time.Time, limit int) ([]selfservice.Meeting, error) {
	sub := meetingbot.Subscription{ID: "self-service check of " + calendarID, CalendarID: calendarID, Reader: reader}
	ms, err := u.source.Meetings(ctx, sub, from.Add(-time.Millisecond), to)
	if err != nil {
		return nil, err
	}
	var out []selfservice.Meeting
	for _, m := range ms {
		if len(out) == limit {
			break
		}
		if !m.Start.Before(from) && m.Start.Before(to) {
			title := m.Title
			if m.Private {
				title = "Private meeting" // as its reminders show it
			}
			out = append(out, selfservice.Meeting{Title: title, Start: m.Start, Series: m.Series, Reminders: m.Reminders})
		}
	}
	return out, nil
}
