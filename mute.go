package meetingbot

import (
	"encoding/json"
	"unicode/utf8"
)

// ActionMuteSeries is the action_id of the "Mute this series" button that
// a reminder of a recurring meeting carries in a subscription made from
// Slack (Subscription.FromSlack); its value is MuteValue's. The notify
// package puts the button on reminders and the selfservice package acts on
// a click, so the two agree here.
const ActionMuteSeries = "mute_series"

// MuteTarget is what a "Mute this series" or "Unmute" button names: a
// recurring series of one subscription, and the title it is listed under.
type MuteTarget struct {
	Subscription string `json:"subscription"`
	Series       string `json:"series"`
	Title        string `json:"title,omitempty"`
}

// Bounds of a mute button's value.
const (
	// MaxButtonValue is Slack's limit on a button's value (Block Kit's
	// reference: 2,000 characters).
	MaxButtonValue = 2000
	// maxMuteTitle bounds the title a button carries.
	maxMuteTitle = 100
)

// MuteValue is the value of a "Mute this series" button (action_id
// ActionMuteSeries) for the recurring series seriesID of subscription
// subscriptionID: the JSON of a MuteTarget. The title, plain text and cut
// to 100 characters (or left out when the value would pass Slack's 2,000),
// is what App Home lists the muted series as. It returns "" when even
// without a title the value would not fit, and then no button can carry
// it.
func MuteValue(subscriptionID, seriesID, title string) string {
	v := MuteTarget{Subscription: subscriptionID, Series: seriesID, Title: clipRunes(title, maxMuteTitle)}
	b, _ := json.Marshal(v)
	if utf8.RuneCount(b) > MaxButtonValue {
		v.Title = ""
		b, _ = json.Marshal(v)
	}
	if utf8.RuneCount(b) > MaxButtonValue {
		return ""
	}
	return string(b)
}

// ParseMuteValue reads a MuteValue; false when s is not one (a button of
// another version, or a forged value).
func ParseMuteValue(s string) (MuteTarget, bool) {
	var v MuteTarget
	if json.Unmarshal([]byte(s), &v) != nil || v.Subscription == "" || v.Series == "" {
		return MuteTarget{}, false
	}
	return v, true
}

// clipRunes cuts s to n characters, the last being "…" when it was cut.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
