package meetingbot

import (
	"context"
	"errors"
	"time"
)

// CalendarSync is what the bot keeps of one calendar's incremental sync
// beside its mirror of the calendar's upcoming instances: the token that
// asks Google for the changes since the last sync, and the window the
// mirror holds.
type CalendarSync struct {
	// CalendarID names the calendar.
	CalendarID string
	// Token is the nextSyncToken of the last sync; "" asks for a full
	// sync.
	Token string
	// From and Horizon bound the instances the mirror holds: those
	// starting after From and at or before Horizon.
	From, Horizon time.Time
	// FullAt is when the calendar was last synced in full, SyncedAt when
	// it was last synced in either way.
	FullAt, SyncedAt time.Time
}

// PushChannel is a Calendar push notification channel open on a
// calendar's events, kept so that its notifications can be verified and
// the channel renewed or stopped after a restart. Token is a secret.
type PushChannel struct {
	// ID is the channel's ID, chosen by the bot.
	ID string
	// CalendarID is the watched calendar, as the mirror reads it
	// (Subscription.Reading).
	CalendarID string
	// Opener is the identity that opened the channel, the only one Google
	// lets stop it ("Channel … not found for project" to any other,
	// googleapis/google-api-nodejs-client#627): "" for the bot's own
	// credentials, else the reading (ReadAs) of the person whose connected
	// account opened it.
	Opener string
	// Token is the secret every notification of the channel carries.
	Token string
	// ResourceID is Google's ID of the watched events, which stopping the
	// channel needs.
	ResourceID string
	// Expiration is when Google ends the channel.
	Expiration time.Time
}

// Synced is the outcome of one sync of a calendar's mirror (see
// CalendarSync): what changed since the token it was asked with, or, for a
// full sync, the whole window.
type Synced struct {
	// Full is true for a full sync: Changed is then the whole mirror.
	Full bool
	// Changed are the meetings new or changed, keyed by their ID.
	Changed []Meeting
	// Removed are the IDs of instances that are no longer meetings in
	// the window: cancelled, deleted, declined, moved out of it.
	Removed []string
	// Token is the nextSyncToken; "" makes the next sync a full one.
	Token string
	// Series are the recurring events (their IDs, as
	// Meeting.RecurringEventID names them) that an incremental sync's
	// items belong to or are: an instance's, a master listed itself, the
	// series an instance's sparse tombstone names. What Google reports of
	// a changed series is undocumented and not always whole (an instance
	// deleted may come without a tombstone), so the mirror reads the
	// instances of each again rather than trust Changed and Removed for
	// them. A deleted series may also come as its master's tombstone
	// alone, an ID in Removed like any deleted event's.
	Series []string
}

// ErrSyncTokenGone is what a sync's error matches when Google no longer
// accepts the sync token (410 Gone, fullSyncRequired: it expired, or the
// calendar's sharing changed): what was kept of the calendar is cleared
// and it is synced again in full.
var ErrSyncTokenGone = errors.New("sync token no longer valid, a full sync is required")

// ErrChannelIDTaken is what a watch's error matches when Google already
// has a push channel with that ID (400 channelIdNotUnique): the caller
// watches again with a new ID.
var ErrChannelIDTaken = errors.New("channel ID already in use")

// ErrPushAddressUnverified is what a watch's error matches when Google
// refuses to post notifications to its address because the address's
// domain is not verified for the project ("Unauthorized WebHook callback
// channel", reason push.webhookUrlUnauthorized): every watch to that
// address is refused alike until the operator verifies the domain.
var ErrPushAddressUnverified = errors.New("the notification address's domain is not verified for the Google Cloud project")

type renewalKey struct{}

// WithRenewal marks the channel a watch made with ctx opens as the renewal
// of a live channel of its calendar, which the Calendar client counts
// apart from a first opening: renewals are the channels' upkeep, a cost of
// push that grows with time, not with changes.
func WithRenewal(ctx context.Context) context.Context {
	return context.WithValue(ctx, renewalKey{}, true)
}

// Renewal reports whether ctx is WithRenewal's.
func Renewal(ctx context.Context) bool {
	r, _ := ctx.Value(renewalKey{}).(bool)
	return r
}
