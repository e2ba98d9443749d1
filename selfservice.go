package meetingbot

import (
	"errors"
	"time"
)

// SlackKind says how a subscription was made from Slack.
type SlackKind string

// Kinds of subscriptions made from Slack.
const (
	// SlackPersonal is "/meetingbot on": the caller's own calendar, DMed
	// to them.
	SlackPersonal SlackKind = "personal"
	// SlackChannel is "/meetingbot subscribe": a calendar posted in a
	// channel.
	SlackChannel SlackKind = "channel"
)

// SlackSubscription is a subscription made from Slack. Its ID is chosen by
// the caller and must be derived from CalendarID and Destination alone, so
// that the same subscription made again gets the same ID (and with it its
// ledger keys and cursor).
type SlackSubscription struct {
	ID          string
	Kind        SlackKind
	CalendarID  string
	Destination string          // a Slack user ID (personal) or channel ID (channel)
	Offsets     []time.Duration // ascending, whole seconds
	CreatedBy   string          // Slack user ID
	CreatedAt   time.Time       // UTC
	// Muted lists the recurring series IDs muted for this subscription,
	// sorted. It is filled by the reads; writes ignore it.
	Muted []string
}

// MutedSeries is a recurring series muted for one subscription.
type MutedSeries struct {
	Subscription string
	Series       string // the recurring event's ID
	Title        string // as shown when it was muted
	MutedBy      string // Slack user ID
	MutedAt      time.Time
}

// SlackSettings are one Slack user's settings.
type SlackSettings struct {
	UserID string
	// Offsets is the user's choice, kept while their reminders are off;
	// nil means the bot's default.
	Offsets []time.Duration
	// Agenda is the daily agenda's time "HH:MM" in TZ; "" for none.
	Agenda string
	// TZ is the user's IANA zone as Slack last reported it.
	TZ        string
	UpdatedAt time.Time
}

// Subscription returns the subscription the scheduler sweeps for s: its
// ID, calendar, destination, offsets and muted series, marked FromSlack,
// read as the person who set it up (Subscription.Reader): with their own
// connected account when the calendar is theirs, else with the bot's.
func (s SlackSubscription) Subscription() Subscription {
	return Subscription{ID: s.ID, CalendarID: s.CalendarID, Reader: s.CreatedBy, Destination: s.Destination, Offsets: s.Offsets, Muted: s.Muted, FromSlack: true}
}

// ErrInvalid is returned by a store's self-service writes for a value the
// database must not hold (an empty ID, an unknown kind, no offsets). Both
// stores (SQLite and PostgreSQL) return it.
var ErrInvalid = errors.New("invalid value")
