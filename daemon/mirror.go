package daemon

import (
	"context"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/connect"
	"github.com/meetingbot/meetingbot/mirror"
	"github.com/meetingbot/meetingbot/rsvp"
	"github.com/meetingbot/meetingbot/status"
)

// makeMirror makes the mirror of the calendars subscribed: synced every
// CALENDAR_RESYNC_INTERVAL and, with PUBLIC_URL, on every push
// notification. Its calendars are those of CALENDARS, with self-service
// those people subscribed in Slack, and those of people's statuses and
// invitation notices; the status engine, which lists the statuses', is
// made here. With replicas, the calendars this one keeps push channels on
// are those it holds.
func (b *Bot) makeMirror(ctx context.Context) error {
	if b.accounts != nil && b.cfg.SlackConnect() {
		b.statuses = status.New(status.Config{Connections: b.store, Settings: b.store, Email: b.email, Logger: b.log})
	}
	b.calendars = b.subscribedCalendars()
	g := calendar.Mirrored{Source: b.source}
	if b.cfg.PublicURL != "" {
		b.log.Info("Calendar push notifications on: one channel per calendar posts to "+b.cfg.NotifyURL()+", which must reach HTTP_ADDR",
			"resync", b.cfg.ResyncInterval)
	}
	var watch func(string) bool
	if b.held != nil {
		watch = b.held.watch
	}
	mir, err := mirror.New(g, b.store, mirror.Options{
		Resync:    b.cfg.ResyncInterval,
		Tick:      b.cfg.TickInterval,
		Push:      g,
		Address:   b.cfg.NotifyURL(),
		Calendars: b.calendars,
		Watch:     watch,
		Logger:    b.log,
		Observer:  b.mon,
	})
	if err != nil {
		return err
	}
	b.mir = mir
	if b.held != nil {
		b.held.onFirst(mir.MaintainNow) // the channels of what it holds, once it knows
	}
	if b.accounts != nil {
		b.accounts.Hook(connect.Hooks{
			// A connection made adds a calendar to keep (a status's, a
			// connected account's): its channel opens now, not at the
			// next maintenance, so that a change made meanwhile is told
			// at once rather than at its resync.
			Connected: func(context.Context, meetingbot.Connection) { mir.MaintainNow() },
			// A connection about to be revoked stops the push channels
			// it opened, while it still can.
			Disconnecting: func(ctx context.Context, c meetingbot.Connection) { mir.StopChannels(ctx, c.Account) },
		})
	}
	return nil
}

// subscribedCalendars returns what lists the calendars subscribed now:
// those of CALENDARS, with self-service those people subscribed in
// Slack, and those of people's statuses and invitation notices.
func (b *Bot) subscribedCalendars() func(ctx context.Context) ([]string, error) {
	var extra []func(ctx context.Context) ([]string, error)
	if b.statuses != nil {
		extra = append(extra, b.statuses.Calendars)
	}
	if b.answering() {
		extra = append(extra, rsvp.Calendars(b.store, b.accounts))
	}
	return func(ctx context.Context) ([]string, error) {
		seen := map[string]bool{}
		var out []string
		add := func(c string) {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
		for _, s := range b.cfg.Subscriptions {
			add(s.Reading())
		}
		if b.cfg.SelfService() {
			made, err := b.store.SlackSubscriptions(ctx)
			if err != nil {
				return nil, err
			}
			for _, s := range made {
				add(s.Subscription().Reading())
			}
		}
		for _, more := range extra {
			cals, err := more(ctx)
			if err != nil {
				return nil, err
			}
			for _, c := range cals {
				add(c)
			}
		}
		return out, nil
	}
}

// answering reports whether people answer invitations from Slack: with
// self-service on, through the Google accounts they connected.
func (b *Bot) answering() bool {
	return b.cfg.SelfService() && b.accounts != nil && b.accounts.Enabled(meetingbot.ProviderGoogle)
}
