package calendar

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot/scheduler"
)

// eventFields is the fields mask of events.list: only what meeting reads
// travels.
const eventFields = "nextPageToken,items(id,status,eventType,summary,start(date,dateTime),end(date,dateTime)," +
	"htmlLink,hangoutLink,conferenceData(entryPoints(entryPointType,uri)),location,description," +
	"organizer(email,displayName),attendees(self,responseStatus),updated)"

// notMeetings are the event types that never deserve a reminder.
var notMeetings = map[string]bool{
	"outOfOffice":     true,
	"focusTime":       true,
	"workingLocation": true,
	"birthday":        true,
}

// meeting converts a listed event. ok is false for events that are not
// meetings (cancelled, all-day, declined, not a meeting type); err reports
// an event that cannot be read.
func meeting(ev *calendar.Event) (m scheduler.Meeting, ok bool, err error) {
	switch {
	case ev.Id == "":
		return m, false, errors.New("missing id")
	case ev.Status == "cancelled", notMeetings[ev.EventType]:
		return m, false, nil
	case ev.Start == nil || ev.End == nil:
		return m, false, errors.New("missing start or end")
	case ev.Start.DateTime == "" && ev.Start.Date != "":
		return m, false, nil // all-day
	}
	for _, a := range ev.Attendees {
		if a != nil && a.Self && a.ResponseStatus == "declined" {
			return m, false, nil
		}
	}
	m = scheduler.Meeting{
		ID:       ev.Id,
		Title:    ev.Summary,
		HTMLLink: ev.HtmlLink,
		JoinURL:  joinURL(ev),
	}
	if m.Title == "" {
		m.Title = "(No title)"
	}
	if m.Start, err = time.Parse(time.RFC3339, ev.Start.DateTime); err != nil {
		return m, false, fmt.Errorf("start.dateTime: %w", err)
	}
	if m.End, err = time.Parse(time.RFC3339, ev.End.DateTime); err != nil {
		return m, false, fmt.Errorf("end.dateTime: %w", err)
	}
	if m.End.Before(m.Start) {
		return m, false, errors.New("ends before it starts")
	}
	if ev.Organizer != nil {
		m.Organizer = ev.Organizer.DisplayName
		if m.Organizer == "" {
			m.Organizer = ev.Organizer.Email
		}
	}
	if ev.Updated != "" {
		// updated is informational: a bad one does not cost the reminder.
		m.Updated, _ = time.Parse(time.RFC3339, ev.Updated)
	}
	return m, true, nil
}

// appendMeetings appends the meetings of items starting in (from, to],
// logging and skipping the events it cannot read.
func appendMeetings(dst []scheduler.Meeting, items []*calendar.Event, from, to time.Time, calendarID string, log *slog.Logger) []scheduler.Meeting {
	for _, ev := range items {
		if ev == nil {
			continue
		}
		m, ok, err := meeting(ev)
		if err != nil {
			log.Warn("skipping unreadable event", "calendar", calendarID, "event", ev.Id, "err", err)
			continue
		}
		if ok && m.Start.After(from) && !m.Start.After(to) {
			dst = append(dst, m)
		}
	}
	return dst
}
