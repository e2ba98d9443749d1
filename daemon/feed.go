package daemon

import (
	"context"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/agenda"
	"github.com/meetingbot/meetingbot/feed"
	"github.com/meetingbot/meetingbot/mirror"
	"github.com/meetingbot/meetingbot/notify"
)

// The adapters provide what the change notices and the channel agendas
// consume.
var (
	_ feed.Source            = (*mirror.Mirror)(nil)
	_ feed.Notifier          = (*notify.Slack)(nil)
	_ agenda.ChannelNotifier = (*notify.Slack)(nil)
)

// makeFeed makes what channels that follow a calendar post besides
// reminders, on with self-service, which sets it: the change notices
// ("/meetingbot subscribe <calendar> changes"), which read the calendars
// through the mirror (it keeps every calendar subscribed in Slack), and
// the daily and weekly agendas ("daily 09:00", "weekly mon 09:00"), which
// read each day or week from the calendar, as a person's agenda does.
func (b *Bot) makeFeed(context.Context) error {
	if !b.cfg.SelfService() {
		return nil
	}
	var err error
	b.changes, err = feed.New(b.followed, b.mir, b.store, b.slack, b.store, feed.Options{
		Interval: b.cfg.TickInterval,
		Lease:    claimLease(b.cfg),
		Logger:   b.log,
	})
	if err != nil {
		return err
	}
	b.channelAgendas, err = agenda.NewChannels(b.channelsWithAgendas, b.source, b.slack, b.store, agenda.Options{
		Interval: b.cfg.TickInterval,
		Lease:    claimLease(b.cfg),
		Logger:   b.log,
	})
	return err
}

// channelsWithAgendas lists the channel subscriptions made in Slack that
// post agendas.
func (b *Bot) channelsWithAgendas(ctx context.Context) ([]agenda.ChannelSettings, error) {
	made, err := b.store.SlackSubscriptions(ctx)
	if err != nil {
		return nil, err
	}
	var out []agenda.ChannelSettings
	for _, s := range made {
		if s.Kind == meetingbot.SlackChannel && (s.Daily != "" || s.Weekly != "") {
			out = append(out, agenda.ChannelSettings{Subscription: s.Subscription(), Daily: s.Daily, Weekly: s.Weekly, Zone: s.Zone})
		}
	}
	return out, nil
}

// followed lists the channel subscriptions made in Slack that follow
// their calendar's changes.
func (b *Bot) followed(ctx context.Context) ([]feed.Followed, error) {
	made, err := b.store.SlackSubscriptions(ctx)
	if err != nil {
		return nil, err
	}
	var out []feed.Followed
	for _, s := range made {
		if s.Kind == meetingbot.SlackChannel && !s.ChangesSince.IsZero() {
			out = append(out, feed.Followed{Subscription: s.Subscription(), Since: s.ChangesSince})
		}
	}
	return out, nil
}
