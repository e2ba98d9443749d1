package mirror_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/mirror"
)

// google adapts calendar.Source to what the mirror consumes, as cmd/bot
// wires it (the binary's copy is cmd/bot/mirror.go).
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
