package meetingbot

import (
	"errors"
	"strings"
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
	// Following says what else a channel subscription posts: its
	// calendar's changes and its agendas. A channel subscription may have
	// no Offsets when it follows something; a personal one follows
	// nothing.
	Following
	// OnCalendar reminds at each meeting's own popup reminders too
	// ("/meetingbot on calendar"); with it, Offsets may be empty.
	OnCalendar bool
	// Rules say which meetings get reminders; the zero value, all.
	Rules Rules
}

// Following is what a channel subscription posts besides reminders
// ("/meetingbot subscribe <calendar> [offsets] [changes] [daily HH:MM]
// [weekly <day> HH:MM]"): docs/design.md, "Team calendars in channels".
type Following struct {
	// ChangesSince is when the channel began to hear of each change of
	// the calendar (added, moved, cancelled, renamed, re-placed); zero for
	// none. Nothing on the calendar before it is announced.
	ChangesSince time.Time
	// Daily is the daily agenda's time "HH:MM" in Zone; "" for none.
	Daily string
	// Weekly is the weekly agenda's day and time, "mon 09:00", in Zone;
	// "" for none.
	Weekly string
	// Zone is the IANA zone the agendas' times are in: the subscriber's
	// Slack time zone when they set them; "" for UTC.
	Zone string
}

// Any reports whether f follows anything.
func (f Following) Any() bool { return !f.ChangesSince.IsZero() || f.Daily != "" || f.Weekly != "" }

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
	TZ string
	// OnCalendar and Rules are the user's choices for their reminders,
	// kept while they are off as Offsets are. With OnCalendar, Offsets
	// nil means their calendar's reminders alone.
	OnCalendar bool
	Rules      Rules
	UpdatedAt  time.Time
}

// Subscription returns the subscription the scheduler sweeps for s: its
// ID, calendar, destination, offsets, muted series, calendar reminders and
// rules, marked FromSlack, read as the person who set it up
// (Subscription.Reader): with their own connected account when the
// calendar is theirs, else with the bot's.
func (s SlackSubscription) Subscription() Subscription {
	return Subscription{ID: s.ID, CalendarID: s.CalendarID, Reader: s.CreatedBy, Destination: s.Destination, Offsets: s.Offsets, Muted: s.Muted, FromSlack: true,
		OnCalendar: s.OnCalendar, Rules: s.Rules}
}

// ErrInvalid is returned by a store's self-service writes for a value the
// database must not hold (an empty ID, an unknown kind, no offsets). Both
// stores (SQLite and PostgreSQL) return it.
var ErrInvalid = errors.New("invalid value")

// ParseWeekly reads a weekly agenda's day and time as Following.Weekly
// holds them, "mon 09:00" (the day's first three letters, lower case),
// and reports whether it is one.
func ParseWeekly(weekly string) (day time.Weekday, hhmm string, ok bool) {
	name, at, found := strings.Cut(weekly, " ")
	if !found || len(at) != len("09:00") {
		return 0, "", false
	}
	if _, err := time.Parse("15:04", at); err != nil {
		return 0, "", false
	}
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.ToLower(d.String()[:3]) == name {
			return d, at, true
		}
	}
	return 0, "", false
}
