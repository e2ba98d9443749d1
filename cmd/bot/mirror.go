package main

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/mirror"
	"github.com/meetingbot/meetingbot/monitor"
	"github.com/meetingbot/meetingbot/scheduler"
)

// The mirror provides the scheduler's Source, and the fresh reads of its
// fire-time check.
var _ scheduler.FreshSource = (*mirror.Mirror)(nil)

// newMirror builds the mirror of the calendars for cfg: synced every
// CALENDAR_RESYNC_INTERVAL and, with PUBLIC_URL, on every push
// notification, after which wake plans the calendar's changes; changed,
// if set, is told of the meetings each sync wrote (the snoozes follow
// them). With replicas, held says which calendars this one keeps push
// channels on. Its
// calendars are those of CALENDARS and, with self-service, those people
// subscribed in Slack.
func newMirror(cfg config.Config, source *calendar.Source, st store, selfService bool, mon *monitor.Monitor, log *slog.Logger,
	wake func(ctx context.Context, calendarID string), extra func(ctx context.Context) ([]string, error),
	changed func(ctx context.Context, calendarID string, ms []meetingbot.Meeting), held *heldCalendars) (*mirror.Mirror, error) {
	calendars := subscribedCalendars(cfg, st, selfService, extra)
	g := calendar.Mirrored{Source: source}
	if cfg.PublicURL != "" {
		log.Info("Calendar push notifications on: one channel per calendar posts to "+cfg.NotifyURL()+", which must reach HTTP_ADDR",
			"resync", cfg.ResyncInterval)
	}
	var watch func(string) bool
	if held != nil {
		watch = held.watch
	}
	m, err := mirror.New(g, st, mirror.Options{
		Resync:    cfg.ResyncInterval,
		Tick:      cfg.TickInterval,
		Push:      g,
		Address:   cfg.NotifyURL(),
		Calendars: calendars,
		Watch:     watch,
		Logger:    log,
		Observer:  mon,
	})
	if err != nil {
		return nil, err
	}
	m.OnWake(wake)
	if changed != nil {
		m.OnChange(changed)
	}
	return m, nil
}

// subscribedCalendars returns the calendars subscribed now: those of
// CALENDARS, with self-service those people subscribed in Slack, and
// those extra returns (the calendars of people's statuses), if set.
func subscribedCalendars(cfg config.Config, st store, selfService bool, extra func(ctx context.Context) ([]string, error)) func(ctx context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) {
		seen := map[string]bool{}
		var out []string
		add := func(c string) {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
		for _, s := range cfg.Subscriptions {
			add(s.CalendarID)
		}
		if selfService {
			made, err := st.SlackSubscriptions(ctx)
			if err != nil {
				return nil, err
			}
			for _, s := range made {
				add(s.CalendarID)
			}
		}
		if extra != nil { // the calendars of people's statuses
			more, err := extra(ctx)
			if err != nil {
				return nil, err
			}
			for _, c := range more {
				add(c)
			}
		}
		return out, nil
	}
}

// mountNotify serves Google's push notifications, POST /google/notify, on
// the HTTP_ADDR server (the first of servers), beside what it served
// already.
func mountNotify(servers []*httpServer, h http.Handler, log *slog.Logger) {
	srv := servers[0]
	mux := http.NewServeMux()
	mux.Handle(config.NotifyPath, h)
	mux.Handle("/", srv.srv.Handler)
	srv.srv.Handler = mux
	srv.what += " and Google's push notifications (" + config.NotifyPath + ")"
	if len(servers) == 1 {
		log.Info("HTTP_ADDR serves Google's push notifications, so Google must reach it; /metrics and the detailed /healthz, which name calendars and channels, are there too: set METRICS_ADDR (e.g. 127.0.0.1:9091) to move them to a private listener")
	}
}
