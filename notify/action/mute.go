package action

import "encoding/json"

// MuteSeries is the action_id of the "Mute this series" button that a
// reminder of a recurring meeting carries in a subscription made from
// Slack (meetingbot.Subscription.FromSlack); its value is MuteValue's.
const MuteSeries = "mute_series"

// Mute is what a "Mute this series" or "Unmute" button names: a recurring
// series of one subscription, and the title it is listed under.
type Mute struct {
	Subscription string `json:"subscription"`
	Series       string `json:"series"`
	Title        string `json:"title,omitempty"`
}

// maxMuteTitle bounds the title a mute button carries.
const maxMuteTitle = 100

// MuteValue is the value of a "Mute this series" button (action_id
// MuteSeries) for the recurring series seriesID of subscription
// subscriptionID: the JSON of a Mute. The title, plain text and cut to 100
// characters (or left out when the value would pass Slack's 2,000), is what
// App Home lists the muted series as. It returns "" when even without a
// title the value would not fit, and then no button can carry it.
func MuteValue(subscriptionID, seriesID, title string) string {
	v := Mute{Subscription: subscriptionID, Series: seriesID, Title: clipRunes(title, maxMuteTitle)}
	if b := marshal(v); fits(b, MaxButtonValue) {
		return string(b)
	}
	v.Title = ""
	if b := marshal(v); fits(b, MaxButtonValue) {
		return string(b)
	}
	return ""
}

// ParseMute reads a MuteValue; false when s is not one (a button of
// another version, or a forged value).
func ParseMute(s string) (Mute, bool) {
	var v Mute
	if json.Unmarshal([]byte(s), &v) != nil || v.Subscription == "" || v.Series == "" {
		return Mute{}, false
	}
	return v, true
}
