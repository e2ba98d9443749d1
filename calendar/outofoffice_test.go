package calendar_test

import (
	"slices"
	"testing"
	"time"

	gcal "google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

// A timed out-of-office event is given, marked, only to a subscription
// that asks for it (a person's status with out of office on); never to
// reminders. An all-day one, focus time and a working location are
// nothing to either.
func TestOutOfOfficeOnlyForStatus(t *testing.T) {
	srv := newServer(t)
	src, _ := newSource(t, srv, nil)
	start := time.Now().Add(time.Hour).Truncate(time.Minute)
	srv.AddCalendar(alice)
	events := []*gcal.Event{calendartest.NewEvent("review", "Review", start, start.Add(30*time.Minute))}
	typed := func(id, kind string) *gcal.Event {
		ev := calendartest.NewEvent(id, id, start.Add(time.Hour), start.Add(3*time.Hour))
		ev.EventType = kind
		return ev
	}
	away := typed("away", "outOfOffice")
	allDay := typed("holiday", "outOfOffice")
	allDay.Start = &gcal.EventDateTime{Date: start.Format(time.DateOnly)}
	allDay.End = &gcal.EventDateTime{Date: start.AddDate(0, 0, 1).Format(time.DateOnly)}
	events = append(events, away, allDay, typed("focus", "focusTime"), typed("office", "workingLocation"))
	for _, ev := range events {
		if err := srv.Put(alice, ev); err != nil {
			t.Fatal(err)
		}
	}
	status := sub(alice)
	status.OutOfOffice = true
	for _, tt := range []struct {
		name string
		sub  meetingbot.Subscription
		want []string
	}{
		{"reminders", sub(alice), []string{"review"}},
		{"status with out of office on", status, []string{"review", "away"}},
	} {
		got, err := src.Meetings(t.Context(), tt.sub, start.Add(-time.Minute), start.AddDate(0, 0, 2))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got), tt.want) {
			t.Errorf("Meetings for %s = %v, want %v", tt.name, ids(got), tt.want)
		}
		for _, m := range got {
			if m.OutOfOffice != (m.ID == "away") {
				t.Errorf("Meetings for %s: %s OutOfOffice = %v", tt.name, m.ID, m.OutOfOffice)
			}
		}
		_, err = src.Meeting(t.Context(), tt.sub, "away")
		if (err == nil) != tt.sub.OutOfOffice {
			t.Errorf("Meeting(away) for %s: err = %v", tt.name, err)
		}
	}
	day, err := src.Day(t.Context(), sub(alice), start.Add(-time.Minute), start.AddDate(0, 0, 2))
	if err != nil {
		t.Fatal(err)
	}
	if len(day.Meetings) != 1 || len(day.AllDay) != 0 {
		t.Errorf("Day = %v meetings, %v all-day events; want the review alone (no out of office in an agenda)", ids(day.Meetings), day.AllDay)
	}
}
