package e2e

import (
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

// A daily series is deleted 3 seconds before its instance's trigger, on a
// calendar whose incremental sync reports a series' deletion by its master
// alone (calendartest.DeltaMasterOnly), one of the ways the real service
// may: the instance gets no reminder, while a meeting at the same time
// gets its own.
func TestDeletedSeriesGetsNoReminder(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	begins := at(25 * time.Second)
	trigger := begins.Add(-10 * time.Second)
	series := calendartest.NewEvent("standup", "Daily standup", begins, begins.Add(15*time.Minute))
	series.Recurrence = []string{"RRULE:FREQ=DAILY;COUNT=5"}
	if err := w.cal.Put(alice, series); err != nil {
		t.Fatal(err)
	}
	w.meeting(t, "control", "Control meeting", begins)
	p := start(t, w.dir, w.preciseEnv())
	p.ready() // its first, full sync lists the series' instances
	w.cal.SetSeriesDeltas(calendartest.DeltaMasterOnly)
	sleepUntil(trigger.Add(-3 * time.Second))

	if err := w.cal.Delete(alice, "standup"); err != nil {
		t.Fatal(err)
	}
	w.waitMessage(t, "Control meeting", 10*time.Second)
	sleepUntil(begins.Add(2 * time.Second))
	if got := w.messages("Daily standup"); len(got) != 0 {
		t.Errorf("reminders of the deleted series = %d (%q), want none", len(got), got[0].Text)
	}
}
