package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

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
// notification, after which wake plans the calendar's changes. Its
// calendars are those of CALENDARS and, with self-service, those people
// subscribed in Slack.
func newMirror(cfg config.Config, source *calendar.Source, st store, selfService bool, mon *monitor.Monitor, log *slog.Logger,
	wake func(ctx context.Context, calendarID string)) (*mirror.Mirror, error) {
	calendars := func(ctx context.Context) ([]string, error) {
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
		return out, nil
	}
	g := google{source}
	if cfg.PublicURL != "" {
		log.Info("Calendar push notifications on: one channel per calendar posts to "+cfg.NotifyURL()+", which must reach HTTP_ADDR",
			"resync", cfg.ResyncInterval)
	}
	return mirror.New(g, st, mirror.Options{
		Resync:    cfg.ResyncInterval,
		Push:      g,
		Address:   cfg.NotifyURL(),
		Calendars: calendars,
		Wake:      wake,
		Logger:    log,
		Observer:  mon,
	})
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

// google adapts calendar.Source to what the mirror consumes: the sync,
// the reads beyond the mirror, the fire-time check, and push channels
// (mirror/google_test.go has a copy for its tests).
type google struct{ src *calendar.Source }

var (
	_ mirror.Calendar = google{}
	_ mirror.Push     = google{}
)

func (g google) Sync(ctx context.Context, calendarID, token string, from, horizon time.Time) (mirror.Synced, error) {
	res, err := g.src.Sync(ctx, calendarID, token, calendar.Window{From: from, Horizon: horizon})
	switch {
	case errors.Is(err, calendar.ErrSyncTokenGone):
		return mirror.Synced{}, fmt.Errorf("%w: %w", mirror.ErrTokenGone, err)
	case err != nil:
		return mirror.Synced{}, err
	}
	out := mirror.Synced{Full: res.Full, Token: res.Token}
	for _, c := range res.Changes {
		if c.Removed {
			out.Removed = append(out.Removed, c.ID)
		} else {
			out.Changed = append(out.Changed, c.Meeting)
		}
	}
	return out, nil
}

func (g google) Meetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
	return g.src.Meetings(ctx, sub, from, to)
}

func (g google) Meeting(ctx context.Context, sub meetingbot.Subscription, eventID string) (meetingbot.Meeting, error) {
	return g.src.Meeting(ctx, sub, eventID)
}

func (g google) Watch(ctx context.Context, calendarID, channelID, token, address string, ttl time.Duration) (meetingbot.PushChannel, error) {
	ch, err := g.src.Watch(ctx, calendarID, channelID, token, address, ttl)
	switch {
	case errors.Is(err, calendar.ErrChannelIDTaken):
		return meetingbot.PushChannel{}, fmt.Errorf("%w: %w", mirror.ErrChannelIDTaken, err)
	case err != nil:
		return meetingbot.PushChannel{}, err
	}
	return meetingbot.PushChannel{ID: ch.ID, CalendarID: ch.CalendarID, Token: ch.Token, ResourceID: ch.ResourceID, Expiration: ch.Expiration}, nil
}

func (g google) StopChannel(ctx context.Context, ch meetingbot.PushChannel) error {
	return g.src.StopChannel(ctx, ch.CalendarID, ch.ID, ch.ResourceID)
}

func (google) ChannelID(h http.Header) string { return calendar.NotificationChannelID(h) }

func (google) Verify(h http.Header, ch meetingbot.PushChannel) (state, refusal string) {
	n, err := calendar.VerifyNotification(h, calendar.Channel{ID: ch.ID, CalendarID: ch.CalendarID, Token: ch.Token, ResourceID: ch.ResourceID})
	var nerr *calendar.NotificationError
	switch {
	case err == nil:
		return string(n.State), ""
	case errors.As(err, &nerr):
		return "", string(nerr.Reason)
	default:
		return "", "channel"
	}
}
