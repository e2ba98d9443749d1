package meetingbot_test

import (
	"slices"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
)

// A person's status shows for the meetings they attend: those they
// accepted, answered "maybe" or organize, not an invitation they never
// answered (Google puts invitations on the calendar by default, an
// outsider's included). Reminders are for every meeting not declined.
func TestStatusesAreForMeetingsThePersonAttends(t *testing.T) {
	start := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	ms := []meetingbot.Meeting{
		{ID: "organized", Start: start, Response: meetingbot.ResponseNone},
		{ID: "accepted", Start: start, Response: meetingbot.ResponseAccepted},
		{ID: "maybe", Start: start, Response: meetingbot.ResponseTentative},
		{ID: "unanswered", Start: start, Response: meetingbot.ResponseNeedsAction},
	}
	ids := func(ms []meetingbot.Meeting) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	status := meetingbot.Subscription{ID: meetingbot.StatusSubscription("U1"), Kind: meetingbot.KindStatus}
	if got, want := ids(meetingbot.ForSubscription(status, ms)), []string{"organized", "accepted", "maybe"}; !slices.Equal(got, want) {
		t.Errorf("ForSubscription(a status) = %v, want %v", got, want)
	}
	reminders := meetingbot.Subscription{ID: "alice@example.com"}
	if got, want := ids(meetingbot.ForSubscription(reminders, ms)), []string{"organized", "accepted", "maybe", "unanswered"}; !slices.Equal(got, want) {
		t.Errorf("ForSubscription(reminders) = %v, want %v", got, want)
	}
}

// A subscription made in Slack is read as the person who set it up, and
// a reading names the calendar and its reader so that a person's own
// token never answers for what someone else set up.
func TestReadings(t *testing.T) {
	mine := meetingbot.SlackSubscription{ID: "s1", Kind: meetingbot.SlackPersonal, CalendarID: "alice@example.com", Destination: "U1", CreatedBy: "U1"}
	if got := mine.Subscription().Reading(); got != "alice@example.com as U1" {
		t.Errorf("Reading of Alice's own subscription = %q", got)
	}
	theirs := meetingbot.SlackSubscription{ID: "s2", Kind: meetingbot.SlackChannel, CalendarID: "alice@example.com", Destination: "C1", CreatedBy: "U9"}
	if got := theirs.Subscription().Reading(); got == mine.Subscription().Reading() {
		t.Errorf("someone else's subscription of Alice's calendar reads as she does: %q", got)
	}
	fixed := meetingbot.Subscription{ID: "alice@example.com", CalendarID: "alice@example.com"}
	if got := fixed.Reading(); got != "alice@example.com" {
		t.Errorf("Reading of a CALENDARS subscription = %q, want the calendar itself (the bot's credentials)", got)
	}
	for _, r := range []string{"alice@example.com as U1", "alice@example.com", "team@group.calendar.google.com as U2"} {
		cal, reader := meetingbot.ParseReading(r)
		if back := meetingbot.ReadAs(cal, reader); back != r {
			t.Errorf("ReadAs(ParseReading(%q)) = %q", r, back)
		}
	}
}
