package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// A meeting cancelled after it started, while the bot's status for it
// shows, with push notifications on and the resync at its default (30
// minutes while a channel is live, 5 otherwise): the status follows its
// meeting until the meeting ends, not until it starts, and is cleared
// within seconds of the cancellation, not at its expiration. The person
// allowed the status moments before: their calendar's channel opens when
// they connect, not up to a minute later.
func TestStatusOfAMeetingCancelledAfterItStarted(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	addr := freeAddr(t)
	env, front := w.statusEnv(t, addr)
	delete(env, "CALENDAR_RESYNC_INTERVAL")
	p := start(t, w.dir, env)
	p.ready()
	if status, page := browse(t, front, w.slash(t, addr, bobID, bobDM, "status on")); status != http.StatusOK || !strings.Contains(page, "Connected your Slack user") {
		t.Fatalf("the Slack flow ended with %d:\n%s", status, page)
	}
	// The meeting is put in at once, as a person who just allowed the
	// status does: the push channel on their calendar must be open by
	// the time it starts, not at the mirror's next maintenance.
	begins := at(8 * time.Second)
	if err := w.cal.Put(bob, calendartest.NewEvent("review", "Review", begins, begins.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "Bob's status set at the meeting's start", func() bool {
		return w.slack.StatusOf(bobID).Emoji == ":spiral_calendar_pad:"
	})
	sleepUntil(begins.Add(4 * time.Second))
	cancelled := time.Now()
	if err := w.cal.Delete(bob, "review"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "Bob's status cleared after the meeting was cancelled", func() bool {
		return w.slack.StatusOf(bobID) == (slacktest.Status{})
	})
	if took := time.Since(cancelled); took > 12*time.Second {
		t.Errorf("status cleared %v after the cancellation, want within seconds", took)
	}
}
