package daemon

import (
	"context"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/feed"
	"github.com/meetingbot/meetingbot/mirror"
	"github.com/meetingbot/meetingbot/notify"
)

// The adapters provide what the change notices consume.
var (
	_ feed.Source   = (*mirror.Mirror)(nil)
	_ feed.Notifier = (*notify.Slack)(nil)
)

// makeFeed makes the change notices of the channels that follow their
// calendar ("/meetingbot subscribe <calendar> changes"), on with
// self-service, which sets them. They read the calendars through the
// mirror, which keeps every calendar subscribed in Slack.
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
	return err
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
