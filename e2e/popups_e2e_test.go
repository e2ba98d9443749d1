package e2e

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	gcal "google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/selfservice"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// popupEvent is Bob's meeting with the reminders given, as Google Calendar
// holds them: overrides of method popup, and an email one the bot ignores.
func popupEvent(start time.Time, popups ...int64) *gcal.Event {
	ev := calendartest.NewEvent("plan", "Bob's planning", start, start.Add(30*time.Minute))
	ev.HangoutLink = "https://meet.google.com/plan"
	ev.Reminders = &gcal.EventReminders{Overrides: []*gcal.EventReminder{{Method: "email", Minutes: 30}}}
	for _, p := range popups {
		ev.Reminders.Overrides = append(ev.Reminders.Overrides, calendartest.Popup(p))
	}
	return ev
}

// TestRemindedAtTheCalendarsOwnPopups: Bob types /meetingbot on calendar,
// and his meeting's popup reminders in Google Calendar, 10 and 2 minutes
// before it, are his reminders, exactly those two. Popups are whole
// minutes, so the meeting starts 2m20s after he turns it on: the
// 10-minute one goes out at once, late, as any reminder whose time passed
// before the bot knew of it. He then changes both in Google Calendar: the
// 10-minute one, already sent, to 5 (not sent again), and the 2-minute
// one, to come, to 1, which reminds him at its new time and never at the
// old. (About 2.5 minutes: Google's reminders count in minutes.)
func TestRemindedAtTheCalendarsOwnPopups(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.selfServiceEnv("REMINDER_OFFSETS=5s")
	p := start(t, w.dir, env)
	addr := p.ready()

	begins := at(2*time.Minute + 20*time.Second)
	if err := w.cal.Put(bob, popupEvent(begins, 10, 2)); err != nil {
		t.Fatal(err)
	}
	reply := w.slash(t, addr, bobID, bobDM, "on calendar")
	if !strings.Contains(reply, "I DM you at each meeting's own reminders in Google Calendar.") {
		t.Errorf("/meetingbot on calendar = %q, want the calendar's own reminders", reply)
	}
	first := w.waitMessage(t, "Bob's planning", 15*time.Second)
	if first.Channel != bobDM || !strings.Contains(first.Text, "starts at") {
		t.Errorf("first reminder in %s: %q, want the late 10-minute one in Bob's DM, naming the start", first.Channel, first.Text)
	}

	if err := w.cal.Put(bob, popupEvent(begins, 5, 1)); err != nil {
		t.Fatal(err)
	}
	sleepUntil(begins.Add(3 * time.Second))
	got := w.messages("Bob's planning")
	if len(got) != 2 {
		for _, m := range got {
			t.Logf("posted %v: %q", m.Posted, m.Text)
		}
		t.Fatalf("reminders = %d, want exactly 2: the 10-minute popup and the 2-minute one, changed to 1", len(got))
	}
	if trigger := begins.Add(-time.Minute); got[1].Posted.Before(trigger) || got[1].Posted.After(trigger.Add(time.Second)) || !strings.Contains(got[1].Text, "starts in 1 minute") {
		t.Errorf("second reminder posted %v, %q; want at %v, starting in 1 minute", got[1].Posted, got[1].Text, trigger)
	}

	p.signal(syscall.SIGTERM)
	if code, _ := p.wait(15 * time.Second); code != 0 {
		t.Errorf("bot exit status = %d, want 0", code)
	}
	if line := logLine(p.out.String(), `"level":"ERROR"`); line != "" {
		t.Errorf("the bot logged an error: %s", line)
	}
	s, err := sqlite.Open(context.Background(), env["DATABASE_PATH"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	entries, err := s.Range(context.Background(), selfservice.SubscriptionID(bob, bobID), begins.Add(-time.Hour), begins)
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[time.Duration]string{}
	for _, e := range entries {
		outcomes[e.Offset] = string(e.Outcome) + " " + string(e.Code)
	}
	want := map[time.Duration]string{
		10 * time.Minute: string(meetingbot.Sent) + " ",
		5 * time.Minute:  string(meetingbot.Skipped) + " " + string(meetingbot.ReasonReminderChanged),
		time.Minute:      string(meetingbot.Sent) + " ",
	}
	for o, w := range want {
		if outcomes[o] != w {
			t.Errorf("ledger at %v = %q, want %q (all: %v)", o, outcomes[o], w, outcomes)
		}
	}
	if _, ok := outcomes[2*time.Minute]; ok {
		t.Errorf("ledger has the 2-minute popup, changed before its time: %v", outcomes)
	}
}
