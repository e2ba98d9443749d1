package scheduler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
)

// onCalendar is alice's subscription that reminds as her calendar says,
// with the fixed offsets given.
func onCalendar(offsets ...time.Duration) meetingbot.Subscription {
	return meetingbot.Subscription{ID: "alice", CalendarID: cal, Offsets: offsets, OnCalendar: true}
}

// popupMeeting puts alice's 09:00 meeting with the popup reminders given.
func popupMeeting(e *env, popups ...time.Duration) {
	e.cal.Put(cal, meetingbot.Meeting{ID: "sync", Title: "sync", Start: at("09:00"), Reminders: popups})
}

// sentAt lists the deliveries as trigger instant and offset.
func sentAt(e *env) []string {
	var out []string
	for _, d := range e.fakeSlack.Deliveries() {
		out = append(out, d.At.Format("15:04:05")+" "+meetingbot.FormatOffset(d.Offset))
	}
	return out
}

// A meeting's own popup reminders are its reminders: at each of them, and
// at nothing else.
func TestOnCalendarRemindsAtEachPopup(t *testing.T) {
	e := newEnv(t, onCalendar())
	popupMeeting(e, 2*time.Minute, 10*time.Minute)
	e.cal.Put(cal, meetingbot.Meeting{ID: "quiet", Title: "quiet", Start: at("09:30")}) // no reminders: none
	e.tickEvery(at("08:40"), at("09:35"), 30*time.Second)
	assert.Equal(t, []string{"08:50:00 10m", "08:58:00 2m"}, sentAt(e))
}

// Fixed offsets add to the popups; a popup and a fixed offset of the same
// minutes are one reminder.
func TestOnCalendarWithFixedOffsets(t *testing.T) {
	e := newEnv(t, onCalendar(5*time.Minute, 10*time.Minute))
	popupMeeting(e, 10*time.Minute)
	e.cal.Put(cal, meetingbot.Meeting{ID: "quiet", Title: "quiet", Start: at("09:30")})
	e.tickEvery(at("08:40"), at("09:35"), 30*time.Second)
	assert.Equal(t, []string{"08:50:00 10m", "08:55:00 5m", "09:20:00 10m", "09:25:00 5m"}, sentAt(e))
}

// A popup changed in Google Calendar before it went out follows: the new
// time reminds, the old one does not.
func TestOnCalendarPopupChangedBeforeItsTime(t *testing.T) {
	e := newEnv(t, onCalendar())
	popupMeeting(e, 2*time.Minute, 10*time.Minute)
	e.tickEvery(at("08:40"), at("08:55"), 30*time.Second)
	popupMeeting(e, 4*time.Minute, 10*time.Minute)
	e.tickEvery(at("08:55:30"), at("09:05"), 30*time.Second)
	assert.Equal(t, []string{"08:50:00 10m", "08:56:00 4m"}, sentAt(e))
}

// A popup changed after its sweep armed its timer is checked at the timer:
// nothing at the old time, the new one at its own.
func TestOnCalendarPopupChangedAfterItWasPlanned(t *testing.T) {
	e := newEnv(t, onCalendar())
	e.fakeMirror = true
	e.restart()
	popupMeeting(e, 2*time.Minute, 10*time.Minute)
	e.tickEvery(at("08:40"), at("08:57:30"), 30*time.Second) // the last sweep arms 08:58:00
	popupMeeting(e, time.Minute, 10*time.Minute)
	e.clock.Set(at("08:58:30")) // the timer fires, finds 2m gone, sweeps: 08:59 armed
	e.tickEvery(at("08:58:30"), at("09:05"), 30*time.Second)
	assert.Equal(t, []string{"08:50:00 10m", "08:59:00 1m"}, sentAt(e))
}

// A popup changed after it went out is the same reminder at another time,
// never sent twice: the 10-minute one, sent, moved to 9 minutes, is not
// sent again, and the 2-minute one still is.
func TestOnCalendarPopupChangedAfterItWentOut(t *testing.T) {
	for _, mode := range []string{"late", "ahead"} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t, onCalendar())
			popupMeeting(e, 2*time.Minute, 10*time.Minute)
			e.tickEvery(at("08:40"), at("08:52"), 30*time.Second)
			moved := 9 * time.Minute // its new time passed already
			if mode == "ahead" {
				moved = 5 * time.Minute // its new time to come
			}
			popupMeeting(e, 2*time.Minute, moved)
			e.tickEvery(at("08:52:30"), at("09:05"), 30*time.Second)
			assert.Equal(t, []string{"08:50:00 10m", "08:58:00 2m"}, sentAt(e))
			var codes []meetingbot.ReasonCode
			for _, en := range e.ledger() {
				if en.Outcome == meetingbot.Skipped {
					codes = append(codes, en.Code)
				}
			}
			assert.Equal(t, []meetingbot.ReasonCode{meetingbot.ReasonReminderChanged}, codes, "the changed popup's new time is recorded as skipped")
		})
	}
}

// A popup removed after it went out changes nothing else: the meeting's
// other popups still remind.
func TestOnCalendarPopupRemovedAfterItWentOut(t *testing.T) {
	e := newEnv(t, onCalendar())
	popupMeeting(e, 2*time.Minute, 10*time.Minute)
	e.tickEvery(at("08:40"), at("08:52"), 30*time.Second)
	popupMeeting(e, 2*time.Minute)
	e.tickEvery(at("08:52:30"), at("09:05"), 30*time.Second)
	assert.Equal(t, []string{"08:50:00 10m", "08:58:00 2m"}, sentAt(e))
}

// A popup added after another went out is a reminder of its own.
func TestOnCalendarPopupAddedAfterAnotherWentOut(t *testing.T) {
	e := newEnv(t, onCalendar())
	popupMeeting(e, 10*time.Minute)
	e.tickEvery(at("08:40"), at("08:52"), 30*time.Second)
	popupMeeting(e, 5*time.Minute, 10*time.Minute)
	e.tickEvery(at("08:52:30"), at("09:05"), 30*time.Second)
	assert.Equal(t, []string{"08:50:00 10m", "08:55:00 5m"}, sentAt(e))
}

// Rules skip meetings at the sweep, and again at the timer's check: an
// invitation answered "maybe" after its reminder was planned gets none.
func TestRulesAppliedAtPlanningAndAtTheCheck(t *testing.T) {
	s := sub("alice")
	s.Rules = meetingbot.Rules{SkipMaybe: true, SkipNoLink: true}
	e := newEnv(t, s)
	e.fakeMirror = true
	e.restart()
	e.cal.Put(cal, meetingbot.Meeting{ID: "nolink", Title: "nolink", Start: at("09:00")})
	e.cal.Put(cal, meetingbot.Meeting{ID: "maybe", Title: "maybe", Start: at("09:00"), JoinURL: "https://meet.google.com/abc-defg-hij", Response: meetingbot.ResponseTentative})
	later := meetingbot.Meeting{ID: "later", Title: "later", Start: at("09:30"), JoinURL: "https://meet.google.com/abc-defg-hij", Response: meetingbot.ResponseAccepted}
	e.cal.Put(cal, later)
	e.cal.Put(cal, meetingbot.Meeting{ID: "ok", Title: "ok", Start: at("09:45"), JoinURL: "https://meet.google.com/abc-defg-hij"})
	e.tickEvery(at("08:40"), at("09:19:30"), 30*time.Second) // arms later's 09:20
	later.Response = meetingbot.ResponseTentative
	e.cal.Put(cal, later)
	e.clock.Set(at("09:20:30"))
	e.tickEvery(at("09:20:30"), at("09:50"), 30*time.Second)
	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 1, "only the meeting no rule skips")
	assert.Equal(t, "ok", got[0].Meeting.ID)
}
