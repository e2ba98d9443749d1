// Package scheduler is the sweep at the heart of the bot: on every tick it asks
// which reminders became due since it last looked, re-reading the calendar each
// time, and sends each due reminder exactly once, recording it in a ledger.
//
// The package declares what it consumes: a Source of meetings, a Notifier that
// delivers one reminder, and a Ledger (storage.Store) that keeps cursors and
// outcomes. The calendar, notify and storage packages provide them.
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Subscription is one calendar read for one Slack destination with a set of
// reminder offsets, e.g. alice@example.com -> DM to Alice at 10m and 1m.
type Subscription struct {
	// ID names the subscription in the ledger, logs and metrics. It scopes
	// keys and cursors, so it must stay the same across restarts.
	ID string
	// CalendarID is the Google Calendar to read, usually the owner's email.
	CalendarID string
	// Destination is where reminders go, as configured: a channel ID (C…,
	// G…), "#name", a user ID (U…, W…) or an email. Empty means a DM to the
	// Slack user whose email is CalendarID.
	Destination string
	// Offsets are how long before a meeting's start to remind; 0 means
	// "starting now".
	Offsets []time.Duration
}

// MaxOffset returns the largest offset of the subscription.
func (s Subscription) MaxOffset() time.Duration {
	var m time.Duration
	for _, o := range s.Offsets {
		m = max(m, o)
	}
	return m
}

// MinOffset returns the smallest offset of the subscription.
func (s Subscription) MinOffset() time.Duration {
	if len(s.Offsets) == 0 {
		return 0
	}
	m := s.Offsets[0]
	for _, o := range s.Offsets[1:] {
		m = min(m, o)
	}
	return m
}

// Meeting is one instance of a calendar event that deserves a reminder.
// Recurring events arrive as one Meeting per occurrence.
type Meeting struct {
	// ID is the event instance ID (e.g. "abc_20261130T010000Z").
	ID string
	// Instance, when set, names the occurrence in ledger keys instead of
	// ID, for a source whose IDs change without the meeting changing (a
	// split recurring series gets new instance IDs). See KeyID.
	Instance string
	// Title is the event summary, unescaped; "(No title)" when empty.
	Title string
	// Start and End are instants; compare them, never their zones.
	Start, End time.Time
	// HTMLLink opens the event in Google Calendar.
	HTMLLink string
	// JoinURL is the video call link, if any.
	JoinURL string
	// Organizer is the organizer's display name or email.
	Organizer string
	// Updated is when the event was last modified.
	Updated time.Time
}

// KeyID returns what names m in its ledger keys: Instance, or ID when
// Instance is empty.
func (m Meeting) KeyID() string {
	if m.Instance != "" {
		return m.Instance
	}
	return m.ID
}

// Reminder is one due trigger: a meeting, one offset, for one subscription.
type Reminder struct {
	Key          string
	Subscription Subscription
	Meeting      Meeting
	Offset       time.Duration
	TriggerAt    time.Time
	// Late is true when the trigger's time had passed before the sweep that
	// found it (the bot was down, or the meeting was created or moved late).
	Late bool
}

// Receipt identifies a delivered message, so it can be found again.
type Receipt struct {
	Channel string
	TS      string
}

// Source reads the meetings of a subscription's calendar.
type Source interface {
	// Meetings returns the meetings that start in (from, to]. An error that
	// reports Permanent() == true (see IsPermanent) needs an operator; any
	// other error is retried on the next tick.
	Meetings(ctx context.Context, sub Subscription, from, to time.Time) ([]Meeting, error)
}

// Notifier delivers reminders.
type Notifier interface {
	// Notify delivers one reminder and returns where it landed. A permanent
	// error (IsPermanent) is recorded as failed and not retried; any other
	// error is retried on the next tick.
	Notify(ctx context.Context, r Reminder) (Receipt, error)
	// Delivered reports whether a reminder with r.Key already reached its
	// destination; it is asked after a crash left a send unconfirmed. It
	// returns ErrUnknown when it cannot tell.
	Delivered(ctx context.Context, r Reminder) (Receipt, bool, error)
}

// ErrUnknown is returned by Notifier.Delivered when it cannot tell whether a
// reminder went out.
var ErrUnknown = errors.New("delivery unknown")

// ErrUnconfirmed marks a Notifier.Notify error after which Slack may hold
// the message: the post may have been accepted (a timeout, a 5xx, an answer
// lost on the way back, an ok without a message reference) and no lookup
// could tell. The scheduler keeps such a reminder in the "look in Slack
// first" state, and asks Delivered before any resend.
var ErrUnconfirmed = errors.New("delivery unconfirmed")

// Permanent marks err as permanent: retrying will not help until an operator
// acts (a missing share, a bad token, a channel the bot is not in).
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

type permanentError struct{ err error }

func (e permanentError) Error() string   { return e.err.Error() }
func (e permanentError) Unwrap() error   { return e.err }
func (e permanentError) Permanent() bool { return true }

// IsPermanent reports whether any error in err's chain says Permanent() ==
// true. Errors from other packages opt in by implementing that method.
func IsPermanent(err error) bool {
	var p interface{ Permanent() bool }
	return errors.As(err, &p) && p.Permanent()
}

// Key returns the ledger key of a trigger: eventID:offset:startAt, with
// startAt the UTC instant in RFC 3339. The same work always gets the same
// key; a moved meeting gets a new one.
func Key(eventID string, offset time.Duration, start time.Time) string {
	return eventID + ":" + FormatOffset(offset) + ":" + start.UTC().Format(time.RFC3339)
}

// FormatOffset writes an offset compactly: "10m", "90s", "0s".
func FormatOffset(d time.Duration) string {
	switch {
	case d%time.Minute == 0 && d != 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	default:
		return fmt.Sprint(d)
	}
}
