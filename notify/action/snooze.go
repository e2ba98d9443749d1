package action

import (
	"encoding/json"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Action IDs of the snooze buttons of a reminder ("Remind me at start",
// "In 5 min"); both contain "snooze".
const (
	SnoozeStart = "snooze_start"
	Snooze5m    = "snooze_5m"
)

// SnoozeMode returns what the snooze button actionID waits for.
func SnoozeMode(actionID string) (meetingbot.SnoozeMode, bool) {
	switch actionID {
	case SnoozeStart:
		return meetingbot.SnoozeAtStart, true
	case Snooze5m:
		return meetingbot.SnoozeIn5m, true
	}
	return "", false
}

// Snooze is what a snooze button names: the reminder it is on and its
// meeting as the reminder shows it.
type Snooze struct {
	Subscription string `json:"s"`
	Reminder     string `json:"k"`
	Event        string `json:"e"`
	Start        int64  `json:"t"`           // Unix seconds
	End          int64  `json:"u,omitempty"` // Unix seconds
	Title        string `json:"n,omitempty"`
	JoinURL      string `json:"j,omitempty"`
}

// maxSnoozeTitle bounds the title a snooze button carries.
const maxSnoozeTitle = 100

// SnoozeValue is the value of a snooze button on the reminder keyed
// reminderKey of subscription subscriptionID, whose meeting m is as the
// reminder shows it: the JSON of a Snooze, the title cut to 100
// characters, and the join link left out, then the title, when the value
// would pass Slack's 2,000 characters. It returns "" when even then it
// would not fit.
func SnoozeValue(subscriptionID, reminderKey string, m meetingbot.Meeting) string {
	v := Snooze{Subscription: subscriptionID, Reminder: reminderKey, Event: m.ID, Start: m.Start.Unix(),
		Title: clipRunes(m.Title, maxSnoozeTitle), JoinURL: m.JoinURL}
	if m.End.After(m.Start) {
		v.End = m.End.Unix()
	}
	for _, cut := range []func(){func() {}, func() { v.JoinURL = "" }, func() { v.Title = "" }} {
		cut()
		if b := marshal(v); fits(b, MaxButtonValue) {
			return string(b)
		}
	}
	return ""
}

// ParseSnooze reads a SnoozeValue; false when s is not one.
func ParseSnooze(s string) (Snooze, bool) {
	var v Snooze
	if json.Unmarshal([]byte(s), &v) != nil || v.Subscription == "" || v.Reminder == "" || v.Event == "" || v.Start == 0 {
		return Snooze{}, false
	}
	return v, true
}

// Meeting returns the meeting the button names, as its reminder showed it.
func (v Snooze) Meeting() meetingbot.Meeting {
	m := meetingbot.Meeting{ID: v.Event, Title: v.Title, Start: time.Unix(v.Start, 0).UTC(), JoinURL: v.JoinURL}
	if v.End > v.Start {
		m.End = time.Unix(v.End, 0).UTC()
	}
	return m
}
