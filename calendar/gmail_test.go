package calendar_test

import (
	"context"
	"slices"
	"testing"
	"time"

	gcal "google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

// An event Gmail added is reminded when it is timed (a flight, a table
// booked), as private whatever its visibility says: it comes from its
// owner's own mail. One that lasts whole days (a hotel stay) is not.
func TestMeetingsFromGmail(t *testing.T) {
	srv := newServer(t)
	berlin, _ := time.LoadLocation("Europe/Berlin")
	lisbon, _ := time.LoadLocation("Europe/Lisbon")
	departs := time.Date(2026, 11, 30, 16, 30, 0, 0, berlin)
	flight := calendartest.NewGmailEvent("flight", "Flight to Lisbon (TP 571)", departs, time.Date(2026, 11, 30, 19, 0, 0, 0, lisbon), alice)
	dinner := calendartest.NewGmailEvent("dinner", "Reservation at Taberna", departs.Add(5*time.Hour), departs.Add(7*time.Hour), alice)
	dinner.Visibility = "public"
	hotel := calendartest.NewGmailEvent("hotel", "Stay at Hotel Avenida", departs, departs.Add(48*time.Hour), alice)
	hotel.Start, hotel.End = &gcal.EventDateTime{Date: "2026-11-30"}, &gcal.EventDateTime{Date: "2026-12-02"}
	for _, ev := range []*gcal.Event{flight, dinner, hotel} {
		if err := srv.Put(alice, ev); err != nil {
			t.Fatal(err)
		}
	}
	src, _ := newSource(t, srv, nil)
	from := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	got, err := src.Meetings(context.Background(), sub(alice), from, from.Add(48*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(got), []string{"flight", "dinner"}) {
		t.Fatalf("Meetings() = %v, want [flight dinner]", ids(got))
	}
	for _, m := range got {
		if !m.Private {
			t.Errorf("Meetings() %s Private = false, want true", m.ID)
		}
	}
	if want := time.Date(2026, 11, 30, 15, 30, 0, 0, time.UTC); !got[0].Start.Equal(want) || !got[0].End.Equal(time.Date(2026, 11, 30, 19, 0, 0, 0, time.UTC)) {
		t.Errorf("flight %v to %v, want %v to 19:00 UTC", got[0].Start, got[0].End, want)
	}
	if got[0].Organizer != alice {
		t.Errorf("flight Organizer = %q, want the recipient %s", got[0].Organizer, alice)
	}
}
