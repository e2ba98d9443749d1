package calendar

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Mirrored is a Source as the mirror consumes it (package mirror's
// Calendar and Push; cmd/bot checks that it provides them): the sync, the
// reads beyond the mirror, the fire-time check, and push channels, in the
// root's words.
type Mirrored struct{ Source *Source }

// Sync is Source.Sync in the root's words; its error matches
// meetingbot.ErrSyncTokenGone when Google refused the token.
func (g Mirrored) Sync(ctx context.Context, calendarID, token string, from, horizon time.Time) (meetingbot.Synced, error) {
	res, err := g.Source.Sync(ctx, calendarID, token, Window{From: from, Horizon: horizon})
	if err != nil {
		return meetingbot.Synced{}, err
	}
	out := meetingbot.Synced{Full: res.Full, Token: res.Token, Series: res.Series}
	for _, c := range res.Changes {
		if c.Removed {
			out.Removed = append(out.Removed, c.ID)
		} else {
			out.Changed = append(out.Changed, c.Meeting)
		}
	}
	return out, nil
}

// Instances is Source.Instances of the window (from, horizon].
func (g Mirrored) Instances(ctx context.Context, calendarID, recurringEventID string, from, horizon time.Time) ([]meetingbot.Meeting, error) {
	return g.Source.Instances(ctx, calendarID, recurringEventID, Window{From: from, Horizon: horizon})
}

func (g Mirrored) Meetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
	return g.Source.Meetings(ctx, sub, from, to)
}

func (g Mirrored) Meeting(ctx context.Context, sub meetingbot.Subscription, eventID string) (meetingbot.Meeting, error) {
	return g.Source.Meeting(ctx, sub, eventID)
}

func (g Mirrored) Watch(ctx context.Context, calendarID, channelID, token, address string, ttl time.Duration) (meetingbot.PushChannel, error) {
	ch, err := g.Source.Watch(ctx, calendarID, channelID, token, address, ttl)
	if err != nil {
		return meetingbot.PushChannel{}, err // meetingbot.ErrChannelIDTaken for an ID in use
	}
	return meetingbot.PushChannel{ID: ch.ID, CalendarID: ch.CalendarID, Opener: ch.Opener, Token: ch.Token, ResourceID: ch.ResourceID, Expiration: ch.Expiration}, nil
}

func (g Mirrored) StopChannel(ctx context.Context, ch meetingbot.PushChannel) error {
	return g.Source.StopChannel(ctx, Channel{ID: ch.ID, CalendarID: ch.CalendarID, Opener: ch.Opener, ResourceID: ch.ResourceID})
}

func (Mirrored) ChannelID(h http.Header) string { return NotificationChannelID(h) }

func (Mirrored) Verify(h http.Header, ch meetingbot.PushChannel) (state string, number int64, refusal string) {
	n, err := VerifyNotification(h, Channel{ID: ch.ID, CalendarID: ch.CalendarID, Token: ch.Token, ResourceID: ch.ResourceID})
	var nerr *NotificationError
	switch {
	case err == nil:
		return string(n.State), n.MessageNumber, ""
	case errors.As(err, &nerr):
		return "", 0, string(nerr.Reason)
	default:
		return "", 0, "channel"
	}
}
