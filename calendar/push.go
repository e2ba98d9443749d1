package calendar

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"

	"github.com/meetingbot/meetingbot"
)

// Push notifications, as Google describes them in "Push notifications"
// (https://developers.google.com/workspace/calendar/api/guides/push): Watch
// opens a channel on a calendar's events (events.watch) and Google then
// POSTs a notification with no body to the channel's address whenever they
// change; VerifyNotification (notification.go) tells a genuine one from a
// forgery; StopChannel closes a channel (channels.stop). A notification
// says only that something changed: the receiver syncs the calendar (Sync)
// to learn what.
//
// Google's words: "Notifications are not 100% reliable. Expect a small
// percentage of messages to get dropped under normal working conditions."
// A channel is a way to learn of a change sooner, never the only way: the
// caller keeps syncing every calendar at a slow interval.
//
// A channel does not renew itself: "When a channel is close to its
// expiration, you must replace it with a new one by calling the watch
// method", with a new channel ID; both channels are live until the old one
// is stopped or expires.

// Names of the push calls reported to Config.Observe and Config.QuotaWait.
const (
	callEventsWatch = "events.watch"
	// callEventsWatchRenewal is an events.watch that renews a live channel
	// (meetingbot.WithRenewal): the channels' upkeep, counted apart.
	callEventsWatchRenewal = "events.watch.renewal"
	callChannelsStop       = "channels.stop"
)

// Limits of a watch request: the channel ID is "a UUID or similar unique
// string", at most 64 characters; its token at most 256.
const (
	maxChannelID    = 64
	maxChannelToken = 256
)

// Watch's error matches meetingbot.ErrChannelIDTaken when Google already
// has a channel with that ID (400 channelIdNotUnique): the caller watches
// again with a new ID. It can also follow a watch whose answer was lost
// and retried; the channel then opened is unknown to the caller, whose
// verification refuses its notifications, and ends at its expiration.

// Channel is a notification channel Watch opened on a calendar. Keep it
// whole: VerifyNotification checks a notification against its ID, Token
// and ResourceID, and StopChannel needs its CalendarID, ID and ResourceID.
// Token is a secret; Channel's LogValue leaves it out.
type Channel struct {
	// ID is the channel's ID, as the caller chose it.
	ID string
	// CalendarID is the watched calendar, the one a notification says to
	// sync.
	CalendarID string
	// Opener is who opened the channel, and who alone may stop it: ""
	// for the credentials, else the reading (meetingbot.ReadAs) whose
	// connected account did.
	Opener string
	// Token is the caller's secret, sent back with every notification.
	Token string
	// ResourceID is Google's opaque ID of the watched events.
	ResourceID string
	// ResourceURI is Google's URI of the watched events.
	ResourceURI string
	// Expiration is when Google ends the channel; zero if it did not say.
	Expiration time.Time
}

// LogValue logs the channel without its token.
func (c Channel) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("id", c.ID),
		slog.String("calendar", c.CalendarID),
		slog.String("resource", c.ResourceID),
		slog.Time("expiration", c.Expiration),
	)
}

// Watch opens a channel on calendarID's events (events.watch, type
// web_hook): Google will POST notifications to address, an https URL,
// each carrying channelID and token, until ttl has passed (0: Google's
// default, a week) or StopChannel. It reads as the calendar's owner when
// impersonating, with the same quotas, retries and explanations as Meetings.
// The first notification, state "sync", may arrive before Watch returns.
// A watch with a ctx of meetingbot.WithRenewal is reported to Observe as
// "events.watch.renewal".
//
// channelID must be unique among the caller's live channels (at most 64
// characters; a random one per watch); token should be random and secret
// (at most 256 characters): it is what VerifyNotification tells Google's
// notifications by. An error matching meetingbot.ErrChannelIDTaken asks for a new ID;
// other errors are as Meetings's, bad arguments and a refused address
// permanent.
func (s *Source) Watch(ctx context.Context, reading, channelID, token, address string, ttl time.Duration) (Channel, error) {
	calendarID, _ := meetingbot.ParseReading(reading)
	if err := checkWatch(channelID, token, address, ttl); err != nil {
		return Channel{}, meetingbot.Permanent(fmt.Errorf("calendar %s: %s: %w", calendarID, callEventsWatch, err))
	}
	req := &calendar.Channel{Id: channelID, Type: "web_hook", Address: address, Token: token}
	if ttl > 0 {
		req.Params = map[string]string{"ttl": strconv.FormatInt(int64(ttl/time.Second), 10)}
	}
	var resp *calendar.Channel
	taken := false
	call := callEventsWatch
	if meetingbot.Renewal(ctx) {
		call = callEventsWatchRenewal
	}
	opener := ""
	err := s.withRetries(ctx, call, reading, func() error {
		svc, err := s.service(ctx, reading)
		if err != nil {
			return meetingbot.Permanent(err)
		}
		opener = s.readsAs(reading)
		resp, err = svc.Events.Watch(calendarID, req).Context(ctx).Do()
		var gerr *googleapi.Error
		if errors.As(err, &gerr) && gerr.Code == http.StatusBadRequest && hasReason(gerr, "channelIdNotUnique") {
			taken = true // an answer, not a failure to retry or explain
			return nil
		}
		return err
	})
	switch {
	case err != nil:
		return Channel{}, err
	case taken:
		return Channel{}, fmt.Errorf("calendar %s: %s: channel %s: %w", calendarID, callEventsWatch, channelID, meetingbot.ErrChannelIDTaken)
	case resp.ResourceId == "":
		return Channel{}, fmt.Errorf("calendar %s: %s: the answer has no resourceId", calendarID, callEventsWatch)
	}
	ch := Channel{
		ID:          channelID,
		CalendarID:  reading,
		Opener:      opener,
		Token:       token,
		ResourceID:  resp.ResourceId,
		ResourceURI: resp.ResourceUri,
	}
	if resp.Expiration > 0 {
		ch.Expiration = time.UnixMilli(resp.Expiration)
	}
	return ch, nil
}

// checkWatch refuses what Google would, and what VerifyNotification could
// not verify: a channel without a token.
func checkWatch(channelID, token, address string, ttl time.Duration) error {
	switch {
	case channelID == "" || len(channelID) > maxChannelID:
		return fmt.Errorf("channel ID %q: want 1 to %d characters", channelID, maxChannelID)
	case token == "" || len(token) > maxChannelToken:
		return fmt.Errorf("channel token: want 1 to %d characters", maxChannelToken)
	case ttl < 0 || (ttl > 0 && ttl < time.Second):
		return fmt.Errorf("channel ttl %v: want 0 (Google's default) or at least 1s", ttl)
	}
	if u, err := url.Parse(address); err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("notification address %q: Google posts notifications to https URLs only, e.g. https://bot.example.com/google/notify", address)
	}
	return nil
}

// StopChannel closes ch, which Watch opened (channels.stop), acting as
// the identity that opened it, ch.Opener: Google answers any other with
// 404 "Channel … not found for project"
// (googleapis/google-api-nodejs-client#627), which would leave the channel
// live until it expires. A channel Google no longer has, because it
// expired or was stopped already, is not an error. Other errors are as
// Meetings's.
func (s *Source) StopChannel(ctx context.Context, ch Channel) error {
	as := ch.Opener
	if as == "" {
		as, _ = meetingbot.ParseReading(ch.CalendarID) // the credentials
	}
	return s.withRetries(ctx, callChannelsStop, as, func() error {
		svc, err := s.service(ctx, as)
		if err != nil {
			return meetingbot.Permanent(err)
		}
		err = svc.Channels.Stop(&calendar.Channel{Id: ch.ID, ResourceId: ch.ResourceID}).Context(ctx).Do()
		var gerr *googleapi.Error
		if errors.As(err, &gerr) && gerr.Code == http.StatusNotFound {
			return nil // gone already: what stopping asks for
		}
		return err
	})
}

// hasReasonPrefix reports whether one of err's reasons starts with prefix.
func hasReasonPrefix(err *googleapi.Error, prefix string) bool {
	for _, e := range err.Errors {
		if strings.HasPrefix(e.Reason, prefix) {
			return true
		}
	}
	return false
}
