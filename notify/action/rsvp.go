package action

import (
	"encoding/json"

	"github.com/meetingbot/meetingbot"
)

// Action IDs of the answer controls: the buttons of reminders and notices
// (Going / Maybe / No), and the menu of a digest's lines, whose selected
// option's value is an RSVPOption.
const (
	RSVPGoing = "rsvp_accepted"
	RSVPMaybe = "rsvp_tentative"
	RSVPNo    = "rsvp_declined"
	RSVPMenu  = "rsvp_menu"
)

// Answer returns the answer of an answer button's action ID.
func Answer(actionID string) (meetingbot.Response, bool) {
	switch actionID {
	case RSVPGoing:
		return meetingbot.ResponseAccepted, true
	case RSVPMaybe:
		return meetingbot.ResponseTentative, true
	case RSVPNo:
		return meetingbot.ResponseDeclined, true
	}
	return "", false
}

// IsRSVP reports whether actionID is one of the answer controls.
func IsRSVP(actionID string) bool {
	_, ok := Answer(actionID)
	return ok || actionID == RSVPMenu
}

// RSVP is what an answer control names: the invitation answered.
type RSVP struct {
	// Calendar is the calendar whose copy of the event is answered; ""
	// for the clicker's own (their connected account).
	Calendar string `json:"c,omitempty"`
	// Event is the event's ID: an instance, a single event, or for a
	// series' notice the recurring event, whose answer holds for every
	// occurrence.
	Event string `json:"e"`
	// Response is the answer, for a digest's menu option; a button's
	// action ID says it.
	Response meetingbot.Response `json:"r,omitempty"`
}

// RSVPValue is the value of an answer button naming t: its JSON, or ""
// when it would pass Slack's 2,000 characters (MaxButtonValue).
func RSVPValue(t RSVP) string {
	if b := marshal(t); fits(b, MaxButtonValue) {
		return string(b)
	}
	return ""
}

// RSVPOption is the value of a digest menu's option answering r to the
// event of the person's own calendar: "" when it would pass Slack's 150
// characters.
func RSVPOption(event string, r meetingbot.Response) string {
	if b := marshal(RSVP{Event: event, Response: r}); fits(b, MaxOptionValue) {
		return string(b)
	}
	return ""
}

// ParseRSVP reads an RSVPValue or an RSVPOption; false when s is neither.
func ParseRSVP(s string) (RSVP, bool) {
	var t RSVP
	if json.Unmarshal([]byte(s), &t) != nil || t.Event == "" || (t.Response != "" && !t.Response.Answer()) {
		return RSVP{}, false
	}
	return t, true
}

// Block IDs of a message's answer: the line saying the person's answer,
// and the actions block of the answer buttons. A click replaces the line
// (AnswerLine of the new answer) in the message clicked.
const (
	AnswerBlock = "rsvp_answer"
	RSVPBlock   = "rsvp_actions"
)

// AnswerLine is the line (Slack mrkdwn) that says a person's answer r on
// a reminder or a notice: "Your answer: *Maybe*", "*You declined*", or
// that they have not answered.
func AnswerLine(r meetingbot.Response) string {
	switch r {
	case meetingbot.ResponseAccepted:
		return ":white_check_mark: Your answer: *Going*"
	case meetingbot.ResponseTentative:
		return ":grey_question: Your answer: *Maybe*"
	case meetingbot.ResponseDeclined:
		return ":x: *You declined*"
	}
	return ":envelope: You haven't answered this invitation yet."
}
