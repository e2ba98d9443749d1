package meetingbot

import "time"

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
	// CalendarID is the watched calendar.
	CalendarID string
	// Token is the secret every notification of the channel carries.
	Token string
	// ResourceID is Google's ID of the watched events, which stopping the
	// channel needs.
	ResourceID string
	// Expiration is when Google ends the channel.
	Expiration time.Time
}
