package calendar_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	gcal "google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

// allDay is an all-day event of the emulator from start to end
// (exclusive), dates "2006-01-02".
func allDay(id, title, start, end string) *gcal.Event {
	ev := calendartest.NewEvent(id, title, time.Now(), time.Now())
	ev.Start = &gcal.EventDateTime{Date: start}
	ev.End = &gcal.EventDateTime{Date: end}
	return ev
}

func TestDayListsMeetingsAndAllDayEventsApart(t *testing.T) {
	srv := newServer(t)
	from := time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC) // midnight in New York
	to := from.Add(24 * time.Hour)
	put(t, srv, alice, "late", from.Add(15*time.Hour), 30*time.Minute)
	put(t, srv, alice, "early", from.Add(9*time.Hour), 30*time.Minute)
	put(t, srv, alice, "tomorrow", to.Add(time.Hour), 30*time.Minute)
	declined := calendartest.NewEvent("declined", "Declined", from.Add(10*time.Hour), from.Add(11*time.Hour))
	declined.Attendees = []*gcal.EventAttendee{{Email: alice, Self: true, ResponseStatus: "declined"}}
	require.NoError(t, srv.Put(alice, declined))
	require.NoError(t, srv.Put(alice, allDay("holiday", "Holiday", "2026-11-30", "2026-12-01")))
	require.NoError(t, srv.Put(alice, allDay("trip", "Trip", "2026-11-28", "2026-12-03")))
	skipped := allDay("offsite", "Declined offsite", "2026-11-30", "2026-12-01")
	skipped.Attendees = []*gcal.EventAttendee{{Email: alice, Self: true, ResponseStatus: "declined"}}
	require.NoError(t, srv.Put(alice, skipped))
	birthday := allDay("bday", "Birthday", "2026-11-30", "2026-12-01")
	birthday.EventType = "birthday"
	require.NoError(t, srv.Put(alice, birthday))
	src, _ := newSource(t, srv, nil)

	day, err := src.Day(t.Context(), sub(alice), from.Add(-time.Nanosecond), to.Add(-time.Nanosecond))
	require.NoError(t, err)
	assert.Equal(t, []string{"early", "late"}, ids(day.Meetings), "Day().Meetings")
	var got []string
	for _, e := range day.AllDay {
		got = append(got, e.ID)
		assert.True(t, e.On("2026-11-30"), "%s.On(2026-11-30)", e.ID)
	}
	assert.Equal(t, []string{"trip", "holiday"}, got, "Day().AllDay, by start date")
	assert.False(t, meetingbot.AllDayEvent{StartDate: "2026-11-30", EndDate: "2026-12-01"}.On("2026-12-01"), "an all-day event's end date is exclusive")
}
