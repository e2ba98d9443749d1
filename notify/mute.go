package notify

import (
	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify/action"
	"github.com/slack-go/slack"
)

// muteButton returns the "Mute this series" button of r, or nil when r
// gets none: only a reminder of a recurring meeting (Meeting.Series) in a
// subscription made from Slack (Subscription.FromSlack) has one, for the
// operator's subscriptions cannot be changed from Slack. Its value
// (action.MuteValue) names the subscription and the series, and the
// title as the reminder shows it: inert, and "Private meeting" where the
// reminder hides a private meeting's details. A value that cannot fit a
// button gives no button rather than a message Slack refuses.
func muteButton(r meetingbot.Reminder) slack.BlockElement {
	if !r.Subscription.FromSlack || r.Meeting.Series == "" {
		return nil
	}
	m, _ := shown(r)
	value := action.MuteValue(r.Subscription.ID, r.Meeting.Series, inert(m.Title))
	if value == "" {
		return nil
	}
	return slack.NewButtonBlockElement(action.MuteSeries, value,
		slack.NewTextBlockObject(slack.PlainTextType, "Mute this series", false, false))
}
