package meetingbot

import (
	"encoding/json"
	"strings"
	"time"
)

// A reminder sent before its meeting starts carries "Remind me at start"
// and, with at least SnoozeMinLeft to go, "In 5 min" (docs/usage.md,
// "Remind me at start"). A click stores a durable Timer of kind TimerKindSnooze for
// the person who clicked, fired as a DM: at the meeting's start (following
// the meeting when it moves), or five minutes after the click. The
// buttons and what they carry are Slack's side (package notify/action);
// these are the words the snoozes speak once a click is read.

// TimerKindSnooze is the Timer.Kind of snoozes.
const TimerKindSnooze = "snooze"

// SnoozeMode is what a snooze waits for.
type SnoozeMode string

// Snooze modes.
const (
	// SnoozeAtStart: the meeting's start, wherever it moves.
	SnoozeAtStart SnoozeMode = "start"
	// SnoozeIn5m: five minutes after the click, as set.
	SnoozeIn5m SnoozeMode = "5m"
)

// Snooze timings.
const (
	// SnoozeDelay is how long after the click "In 5 min" fires.
	SnoozeDelay = 5 * time.Minute
	// SnoozeMinLeft is how long before the start a reminder must go out
	// to carry "In 5 min": its DM then comes at least a minute before the
	// start.
	SnoozeMinLeft = 6 * time.Minute
)

// Snooze is the payload of a snooze timer: whom to DM, of which meeting,
// as its reminder showed it when clicked.
type Snooze struct {
	// User is the Slack user who clicked, and whom the timer DMs.
	User string `json:"user"`
	// Mode is what it waits for.
	Mode SnoozeMode `json:"mode"`
	// Reminder is the ledger key of the reminder clicked (for a snooze's
	// own DM, of the reminder first clicked).
	Reminder string `json:"reminder"`
	// Subscription and Calendar are the reminder's subscription and the
	// calendar it reads, and Reader the subscription's reader
	// (Subscription.Reader): where the meeting is checked before the DM,
	// as the reminder read it.
	Subscription string `json:"subscription"`
	Calendar     string `json:"calendar"`
	Reader       string `json:"reader,omitempty"`
	// Meeting is the meeting as the reminder showed it (a private one
	// reduced to its time): what the DM says when the calendar cannot be
	// read at its instant.
	Meeting Meeting `json:"meeting"`
}

// snoozePrefix starts snoozes' keys, groups and pseudo-subscriptions. No
// subscription of CALENDARS (an email, or email=destination) nor one
// made in Slack (see selfservice.SubscriptionID) can have it.
const snoozePrefix = "snooze:"

// SnoozeKey returns the key of user's snooze of the reminder keyed
// reminderKey, firing at fire: snooze:<user>:<reminder key>:<fire
// instant>, the instant in RFC 3339, UTC, to the second.
func SnoozeKey(user, reminderKey string, fire time.Time) string {
	return snoozePrefix + user + ":" + reminderKey + ":" + fire.UTC().Format(time.RFC3339)
}

// SnoozeGroup returns the group of user's snoozes of the meeting eventID
// in mode: snooze:<user>:<event ID>:<mode>. A person has one pending
// timer, and gets one DM, per meeting and mode, whichever of its
// reminders (10 minutes ahead, 1 minute ahead, in a channel or a DM) they
// clicked, and wherever the meeting moved: the instance's ID stays when
// its start moves.
func SnoozeGroup(user, eventID string, mode SnoozeMode) string {
	return snoozePrefix + user + ":" + eventID + ":" + string(mode)
}

// SnoozeSubscription returns the pseudo-subscription that scopes user's
// snoozes in the ledger and names their messages' metadata: snooze:<user>.
func SnoozeSubscription(user string) string { return snoozePrefix + user }

// Timer returns the durable timer of s firing at fire: its key, its group
// (SnoozeGroup), its bound (the meeting's end, or its start when the end
// is unknown) and its payload.
func (s Snooze) Timer(fire time.Time) Timer {
	fire = fire.UTC().Truncate(time.Second)
	until := s.Meeting.End
	if !until.After(s.Meeting.Start) {
		until = s.Meeting.Start.Add(StartGrace)
	}
	payload, _ := json.Marshal(s)
	return Timer{
		Key:     SnoozeKey(s.User, s.Reminder, fire),
		Group:   SnoozeGroup(s.User, s.Meeting.ID, s.Mode),
		Kind:    TimerKindSnooze,
		Subject: s.User,
		FireAt:  fire,
		DueAt:   fire,
		Until:   until.UTC(),
		Payload: payload,
		State:   TimerPending,
	}
}

// ParseSnooze reads a snooze timer's payload; false when it is not one.
func ParseSnooze(t Timer) (Snooze, bool) {
	var s Snooze
	if t.Kind != TimerKindSnooze || json.Unmarshal(t.Payload, &s) != nil || s.User == "" || s.Reminder == "" {
		return Snooze{}, false
	}
	return s, true
}

// SnoozedReminder returns the reminder key a snooze's own DM carries on
// its buttons: the reminder first clicked, so that snoozing a snooze's DM
// again finds the same timers. key is a reminder's key or a SnoozeKey.
func SnoozedReminder(key string) string {
	rest, ok := strings.CutPrefix(key, snoozePrefix)
	if !ok {
		return key
	}
	_, rest, ok = strings.Cut(rest, ":") // the user
	const instant = len("2006-01-02T15:04:05Z")
	if !ok || len(rest) <= instant+1 || rest[len(rest)-instant-1] != ':' {
		return key
	}
	return rest[:len(rest)-instant-1]
}
