package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/internal/outbound"
	"github.com/meetingbot/meetingbot/monitor"
	"github.com/meetingbot/meetingbot/rsvp"
	"github.com/meetingbot/meetingbot/selfservice"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// The adapters provide what self-service consumes.
var (
	_ selfservice.Store     = (*sqlite.Store)(nil)
	_ selfservice.Calendars = upcoming{}
)

// selfService is self-service from Slack as the configuration turns it on
// (config.Config.SelfService): the App, Slack's request URLs under /slack/
// on HTTP_ADDR with SLACK_SIGNING_SECRET, Socket Mode with
// SLACK_APP_TOKEN, and the subscriptions people made, which the scheduler
// asks for every round.
type selfService struct {
	app     *selfservice.App
	handler http.Handler       // nil without SLACK_SIGNING_SECRET
	socket  *socketmode.Client // nil without SLACK_APP_TOKEN
	store   selfservice.Store
	fixed   []meetingbot.Subscription // CALENDARS
	mon     *monitor.Monitor
	log     *slog.Logger
}

// slackCallTimeout bounds one Web API call of self-service (users.info,
// views.publish, chat.postEphemeral, chat.postMessage).
const slackCallTimeout = 30 * time.Second

// newSelfService builds self-service for cfg over the bot's store and
// Calendar source, or returns nil when cfg leaves it off. botUserID is the
// bot's Slack user ID ("" when auth.test has not answered).
func newSelfService(cfg config.Config, store selfservice.Store, source *calendar.Source, mon *monitor.Monitor, botUserID string, log *slog.Logger, late *lateAccounts, snoozes *snoozes, answers *rsvp.Service) (*selfService, error) {
	if !cfg.SelfService() {
		return nil, nil
	}
	opts := []slack.Option{
		slack.OptionAPIURL(cfg.SlackAPIURL),
		slack.OptionHTTPClient(outbound.Client(&http.Client{Timeout: slackCallTimeout})),
	}
	if cfg.SlackAppToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(cfg.SlackAppToken))
	}
	api := slack.New(cfg.SlackToken, opts...)
	fixed := make([]selfservice.Fixed, len(cfg.Subscriptions))
	for i, s := range cfg.Subscriptions {
		fixed[i] = selfservice.Fixed{ID: s.ID, CalendarID: s.CalendarID, Destination: s.Destination, Offsets: s.Offsets}
	}
	scfg := selfservice.Config{
		Store:          store,
		Calendars:      upcoming{source},
		Slack:          api,
		DefaultOffsets: cfg.Offsets,
		// An offset a sweep could miss is refused, as in REMINDER_OFFSETS.
		Limits:   selfservice.Limits{Tick: cfg.TickInterval, StartGrace: meetingbot.StartGrace, Max: config.MaxOffset},
		Admins:   cfg.SlackAdmins,
		Operator: fixed,
		Access: selfservice.Access{
			ServiceAccount: source.ServiceAccountEmail(),
			ClientID:       source.ServiceAccountClientID(),
			Impersonate:    cfg.Impersonate,
		},
		BotUserID: botUserID,
		Logger:    log,
		Refused:   func(r selfservice.Refusal) { mon.SlackRefused(string(r)) },
		// response_urls are Slack's (hooks.slack.com); the same limits as
		// every other call to Slack.
		HTTPClient: outbound.Client(&http.Client{Timeout: 10 * time.Second}),
	}
	if late != nil {
		scfg.Accounts = late // people's own accounts, see connect.go
		if ss, ok := store.(selfservice.StatusSettings); ok {
			scfg.StatusSettings = ss
		}
	}
	if snoozes != nil {
		scfg.Snoozes = snoozes.service // the snooze buttons, see snooze.go
	}
	if answers != nil {
		scfg.Answers = answers // Going / Maybe / No, see rsvp.go
		if is, ok := store.(selfservice.InviteStore); ok {
			scfg.Invites = is
		}
	}
	app, err := selfservice.New(scfg)
	if err != nil {
		return nil, fmt.Errorf("self-service: %w", err)
	}
	s := &selfService{app: app, store: store, fixed: cfg.Subscriptions, mon: mon, log: log}
	if cfg.SlackSigningSecret != "" {
		if s.handler, err = app.Handler(cfg.SlackSigningSecret); err != nil {
			return nil, fmt.Errorf("self-service: %w", err)
		}
	}
	if cfg.SlackAppToken != "" {
		s.socket = socketmode.New(api)
	}
	return s, nil
}

// subscriptions returns the subscriptions people made from Slack, with
// their muted series, for the scheduler's Options.Subscriptions, and tells
// the monitor which subscriptions are swept now.
func (s *selfService) subscriptions(ctx context.Context) ([]meetingbot.Subscription, error) {
	made, err := s.store.SlackSubscriptions(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]meetingbot.Subscription, len(made))
	for i, sub := range made {
		out[i] = sub.Subscription()
	}
	s.mon.Sweeping(slices.Concat(s.fixed, out))
	return out, nil
}

// mount serves Slack's request URLs under /slack/ on the HTTP_ADDR server
// (the first of servers), beside what it served already.
func (s *selfService) mount(servers []*httpServer) {
	if s.handler == nil {
		return
	}
	srv := servers[0]
	mux := http.NewServeMux()
	mux.Handle("/slack/", s.handler)
	mux.Handle("/", srv.srv.Handler)
	srv.srv.Handler = mux
	srv.what += " and Slack's request URLs (/slack/commands, /slack/interactivity, /slack/events)"
	if len(servers) == 1 {
		s.log.Info("HTTP_ADDR serves Slack's request URLs, so Slack must reach it; /metrics and the detailed /healthz, which name calendars and channels, are there too: set METRICS_ADDR (e.g. 127.0.0.1:9091) to move them to a private listener")
	}
}

// run serves Socket Mode, when it is on, until ctx ends. A refused
// SLACK_APP_TOKEN is logged with the fix; reminders go on without it.
func (s *selfService) run(ctx context.Context, wg *sync.WaitGroup) {
	if s.socket == nil {
		return
	}
	wg.Go(func() {
		if err := s.app.RunSocketMode(ctx, s.socket); err != nil && !errors.Is(err, context.Canceled) {
			s.log.Error("Slack refused SLACK_APP_TOKEN, so /meetingbot, the Home tab and buttons get no answer over Socket Mode until it is replaced and the bot restarted: "+
				"generate an app-level token with the scope connections:write (Basic Information > App-Level Tokens) and check that Socket Mode is on (Settings > Socket Mode); reminders go on", "err", err)
		}
	})
}

// upcoming reads the calendars people connect from Slack through the
// bot's Calendar source, with the filters reminders use.
type upcoming struct{ source *calendar.Source }

// Upcoming returns up to limit meetings of calendarID starting in [from,
// to), earliest first, a private one titled "Private meeting" as its
// reminders show it; calendar errors keep their Permanent mark.
func (u upcoming) Upcoming(ctx context.Context, calendarID string, from, to time.Time, limit int) ([]selfservice.Meeting, error) {
	sub := meetingbot.Subscription{ID: "self-service check of " + calendarID, CalendarID: calendarID}
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
			out = append(out, selfservice.Meeting{Title: title, Start: m.Start, Series: m.Series})
		}
	}
	return out, nil
}
