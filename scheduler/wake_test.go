package scheduler_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

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
	require.Eventually(t, func() bool { return len(e.fakeSlack.Deliveries()) == 2 }, 5*time.Second, time.Millisecond, "deliveries")
	for _, d := range e.fakeSlack.Deliveries() {
		assert.Equal(t, at("08:50"), d.At, "delivery for %s sent at", d.Subscription.ID)
	}
}

// SweepCalendar reads the subscriptions where they are: a company's
// 10,000 calendars each opening a push channel at start-up make 10,000
// of them, and a copy of the list for each was most of what the bot
// allocated.
func TestSweepCalendarCopiesNoSubscriptions(t *testing.T) {
	subs := make([]meetingbot.Subscription, 2000)
	for i := range subs {
		subs[i] = sub(fmt.Sprintf("u%d", i))
		subs[i].CalendarID = fmt.Sprintf("u%d@example.com", i)
	}
	e := newEnv(t, subs...)
	e.sched.SweepCalendar(context.Background(), "nobody@example.com")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 20 {
		e.sched.SweepCalendar(context.Background(), "nobody@example.com")
	}
	runtime.ReadMemStats(&after)
	perCall := (after.TotalAlloc - before.TotalAlloc) / 20
	assert.Less(t, perCall, uint64(8<<10), "bytes allocated by a SweepCalendar of a calendar no subscription has, among 2,000 (a copy of them is %d)",
		len(subs)*int(unsafe.Sizeof(subs[0])))
}
