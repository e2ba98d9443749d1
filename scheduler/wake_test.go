package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SweepCalendar plans at once what changed in one calendar, for each
// subscription of it and no other: a meeting created after the last sweep
// is reminded at its trigger with no sweep in between.
func TestSweepCalendarPlansAChangeAtOnce(t *testing.T) {
	shared := meetingbot.Subscription{ID: "alice-in-channel", CalendarID: cal, Offsets: []time.Duration{10 * time.Minute}}
	e := newEnv(t, sub("alice"), shared, sub("bob"))
	e.tickAt(at("08:49:00"))
	reads := map[string]int{cal: e.cal.readsOf(cal), "bob@example.com": e.cal.readsOf("bob@example.com")}

	e.clock.Set(at("08:49:10"))
	e.meeting(cal, "new", at("09:00"))
	armed := e.clock.Pending()
	e.sched.SweepCalendar(context.Background(), cal)
	require.Eventually(t, func() bool { return e.clock.Pending() >= armed+2 }, 5*time.Second, time.Millisecond,
		"timers armed after SweepCalendar: want one per subscription of the calendar")
	assert.Equal(t, reads[cal]+2, e.cal.readsOf(cal), "reads of the calendar woken")
	assert.Equal(t, reads["bob@example.com"], e.cal.readsOf("bob@example.com"), "reads of another calendar")

	e.clock.Set(at("08:50:30"))
	require.Eventually(t, func() bool { return len(e.slack.Deliveries()) == 2 }, 5*time.Second, time.Millisecond, "deliveries")
	for _, d := range e.slack.Deliveries() {
		assert.Equal(t, at("08:50"), d.At, "delivery for %s sent at", d.Subscription.ID)
	}
}
