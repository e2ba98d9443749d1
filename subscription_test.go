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
