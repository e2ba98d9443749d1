package mirror

import (
	"context"
	"net/http"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Calendar reads Google Calendar; calendar.Source provides it through
// cmd/bot's adapter.
type Calendar interface {
	// Sync reads what changed in calendarID since token, or every meeting
	// starting in (from, horizon] when token is "" (a full sync),
	// following every page. An error matching
	// meetingbot.ErrSyncTokenGone asks for a full sync; any other is as
	// Meetings's.
	Sync(ctx context.Context, calendarID, token string, from, horizon time.Time) (meetingbot.Synced, error)
	// Instances reads the meetings of one recurring event of calendarID
	// that start in (from, horizon], as the calendar holds them now
	// (events.instances), or fails with an error matching
	// meetingbot.ErrGone when the calendar no longer has that event; any
	// other error is as Meetings's.
	Instances(ctx context.Context, calendarID, recurringEventID string, from, horizon time.Time) ([]meetingbot.Meeting, error)
	// Meetings reads the meetings starting in (from, to] from the
	// calendar itself, for a range the mirror does not hold.
	Meetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error)
	// Meeting reads one instance afresh (events.get), or fails with an
	// error matching meetingbot.ErrGone when it is no longer a meeting.
	Meeting(ctx context.Context, sub meetingbot.Subscription, eventID string) (meetingbot.Meeting, error)
}

// Push opens, stops and verifies Calendar push channels; calendar.Source
// and calendar.VerifyNotification provide it through cmd/bot's adapter.
type Push interface {
	// Watch opens a channel on calendarID's events whose notifications
	// Google posts to address with channelID and token, for ttl (0:
	// Google's default).
	Watch(ctx context.Context, calendarID, channelID, token, address string, ttl time.Duration) (meetingbot.PushChannel, error)
	// StopChannel ends a channel; one Google no longer has is no error.
	StopChannel(ctx context.Context, ch meetingbot.PushChannel) error
	// ChannelID returns the channel ID a notification claims.
	ChannelID(h http.Header) string
	// Verify checks a notification's headers against ch, the channel it
	// names, and returns its state ("sync", "exists", "not_exists") and
	// its X-Goog-Message-Number (which grows with each notification of a
	// channel) when it is genuine, else why it is refused ("channel",
	// "token", "resource", "state", "message_number").
	Verify(h http.Header, ch meetingbot.PushChannel) (state string, number int64, refusal string)
}

// Store keeps the mirror and the channels; sqlite.Store and
// postgres.Store provide it.
type Store interface {
	CalendarSync(ctx context.Context, calendarID string) (meetingbot.CalendarSync, bool, error)
	ReplaceMirror(ctx context.Context, st meetingbot.CalendarSync, meetings []meetingbot.Meeting) error
	UpdateMirror(ctx context.Context, st meetingbot.CalendarSync, changed []meetingbot.Meeting, removed []string) error
	Mirrored(ctx context.Context, calendarID string, from, to time.Time) ([]meetingbot.Meeting, error)
	ForgetMirror(ctx context.Context, calendarID string) error
	MirroredCalendars(ctx context.Context) ([]string, error)
	PutChannel(ctx context.Context, ch meetingbot.PushChannel) error
	Channels(ctx context.Context) ([]meetingbot.PushChannel, error)
	DeleteChannel(ctx context.Context, id string) error
}

// Observer is told what the mirror does, for metrics. Its methods are
// called from several goroutines at once.
type Observer interface {
	// Synced is called after each sync of a calendar: kind is "full",
	// "incremental" or "gone" (Google refused the token; a full sync
	// follows).
	Synced(kind string)
	// Notified is called for each request on the notification endpoint:
	// outcome is "accepted", "replayed" (a message number seen already:
	// answered 200, nothing done) or why it was refused.
	Notified(outcome string)
	// ChannelsOpen is called with the number of push channels open, when
	// the mirror looks at them.
	ChannelsOpen(n int)
}
