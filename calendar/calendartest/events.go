package calendartest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/api/calendar/v3"
)

// NewEvent returns a confirmed event of type "default" from start to end,
// shaped as Google returns one. Its start and end carry the offset of
// start's location, and timeZone is that location's name when it has one.
func NewEvent(id, summary string, start, end time.Time) *calendar.Event {
	zone := start.Location().String()
	if zone == "Local" {
		zone = ""
	}
	return &calendar.Event{
		Kind:      "calendar#event",
		Id:        id,
		ICalUID:   id + "@google.com",
		Status:    "confirmed",
		EventType: "default",
		Summary:   summary,
		HtmlLink:  htmlLink(id),
		Start:     &calendar.EventDateTime{DateTime: start.Format(time.RFC3339), TimeZone: zone},
		End:       &calendar.EventDateTime{DateTime: end.In(start.Location()).Format(time.RFC3339), TimeZone: zone},
		Organizer: &calendar.EventOrganizer{Email: "organizer@example.com", DisplayName: "Organizer"},
		Creator:   &calendar.EventCreator{Email: "organizer@example.com"},
		Updated:   "2026-01-01T00:00:00.000Z",
		// An event created without reminders uses its calendar's
		// defaults: events.insert's reminders.useDefault, "Whether the
		// default reminders of the calendar apply to the event".
		Reminders: &calendar.EventReminders{UseDefault: true},
	}
}

// NewGmailEvent returns an event Google Calendar added from a mail to
// recipient (a flight, a restaurant booking), shaped as the API returns
// one: "Events automatically generated from Gmail have the 'fromGmail'
// event type" (Calendar API event types guide), and since May 2024 they
// "include the email recipient as the organizer instead of
// 'unknownorganizer@calendar.google.com'" (Workspace Updates, "The
// Calendar API now distinguishes events created from Gmail"). Nobody is
// invited and there is no conference. A flight's start and end keep the
// zones of its departure and arrival.
func NewGmailEvent(id, summary string, start, end time.Time, recipient string) *calendar.Event {
	ev := NewEvent(id, summary, start, end)
	ev.EventType = "fromGmail"
	ev.Organizer = &calendar.EventOrganizer{Email: recipient, Self: true}
	ev.Creator = &calendar.EventCreator{Email: recipient, Self: true}
	if zone := end.Location().String(); zone != "Local" {
		ev.End.TimeZone = zone
		ev.End.DateTime = end.Format(time.RFC3339)
	}
	return ev
}

func htmlLink(id string) string {
	return "https://www.google.com/calendar/event?eid=" + base64.RawURLEncoding.EncodeToString([]byte(id))
}

// clone deep-copies an event, so callers and the server never share one.
func clone(ev *calendar.Event) *calendar.Event {
	b, err := json.Marshal(ev)
	if err != nil {
		panic("calendartest: marshal event: " + err.Error())
	}
	var c calendar.Event
	if err := json.Unmarshal(b, &c); err != nil {
		panic("calendartest: unmarshal event: " + err.Error())
	}
	return &c
}

// Put stores ev in calendarID, creating the calendar, or replaces the event
// with the same id: moving a meeting is a Put with new times. An event with
// recurrence is a series; an event with recurringEventId and an instance id
// (see Instance) is an exception that replaces that one instance.
func (s *Server) Put(calendarID string, ev *calendar.Event) error {
	if ev == nil || ev.Id == "" {
		return errors.New("calendartest: put: event without id")
	}
	ev = clone(ev)
	if ev.Kind == "" {
		ev.Kind = "calendar#event"
	}
	if ev.Status == "" {
		ev.Status = "confirmed"
	}
	// Every version of an event has an etag of its own (patch.go).
	ev.Etag = newEtag()
	if err := checkReminders(ev.Reminders); err != nil {
		return fmt.Errorf("calendartest: put %s: %w", ev.Id, err)
	}
	if len(ev.Recurrence) > 0 {
		if err := checkSeries(ev); err != nil {
			return fmt.Errorf("calendartest: put %s: %w", ev.Id, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calendar(calendarID)
	if _, ok := c.events[ev.Id]; !ok {
		c.order = append(c.order, ev.Id)
	}
	c.events[ev.Id] = ev
	s.changed(c)
	return nil
}

// PutJSON stores the events of data, either one Event resource or an
// events.list response ({"items": [...]}), e.g. a fixture file.
func (s *Server) PutJSON(calendarID string, data []byte) error {
	var page struct {
		Items []*calendar.Event `json:"items"`
	}
	if err := json.Unmarshal(data, &page); err != nil {
		return fmt.Errorf("calendartest: put json: %w", err)
	}
	if page.Items == nil {
		var ev calendar.Event
		if err := json.Unmarshal(data, &ev); err != nil {
			return fmt.Errorf("calendartest: put json: %w", err)
		}
		page.Items = []*calendar.Event{&ev}
	}
	for _, ev := range page.Items {
		if err := s.Put(calendarID, ev); err != nil {
			return err
		}
	}
	return nil
}

// Instance returns one instance of a series, by its instance id (e.g.
// "standup_20261130T090000Z"), as events.list would return it; change its
// start and end and Put it back to move that instance only.
func (s *Server) Instance(calendarID, instanceID string) (*calendar.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calendars[calendarID]
	if c == nil {
		return nil, fmt.Errorf("calendartest: calendar %s not found", calendarID)
	}
	if ev, ok := c.events[instanceID]; ok && ev.RecurringEventId != "" {
		return clone(ev), nil
	}
	return c.generatedInstance(instanceID)
}

// generatedInstance expands the series an instance id names. s.mu must be
// held.
func (c *eventSet) generatedInstance(instanceID string) (*calendar.Event, error) {
	i := strings.LastIndexByte(instanceID, '_')
	if i < 0 {
		return nil, fmt.Errorf("calendartest: %s is not an instance id", instanceID)
	}
	master, ok := c.events[instanceID[:i]]
	if !ok || len(master.Recurrence) == 0 {
		return nil, fmt.Errorf("calendartest: no series %s", instanceID[:i])
	}
	orig, err := time.Parse("20060102T150405Z", instanceID[i+1:])
	if err != nil {
		return nil, fmt.Errorf("calendartest: %s: %w", instanceID, err)
	}
	insts, err := expand(master, orig.Add(time.Second))
	if err != nil {
		return nil, err
	}
	for _, inst := range insts {
		if inst.Id == instanceID {
			return inst, nil
		}
	}
	return nil, fmt.Errorf("calendartest: series %s has no instance %s", master.Id, instanceID)
}

// Delete cancels an event as Google does: its status becomes "cancelled",
// so it is listed only with showDeleted. Deleting an instance id of a
// series cancels that instance only; deleting the series cancels all.
func (s *Server) Delete(calendarID, eventID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calendars[calendarID]
	if c == nil {
		return fmt.Errorf("calendartest: calendar %s not found", calendarID)
	}
	ev, ok := c.events[eventID]
	if ok {
		ev = clone(ev) // stored events are replaced, never changed
	} else {
		inst, err := c.generatedInstance(eventID)
		if err != nil {
			return err
		}
		ev = inst
		c.order = append(c.order, eventID)
	}
	ev.Status = "cancelled"
	c.events[eventID] = ev
	s.changed(c)
	return nil
}

// span returns an event's start and (exclusive) end instants. All-day
// dates are read in UTC, the emulated calendars' time zone.
func span(ev *calendar.Event) (start, end time.Time, err error) {
	if start, err = instant(ev.Start); err != nil {
		return start, end, fmt.Errorf("start: %w", err)
	}
	if end, err = instant(ev.End); err != nil {
		return start, end, fmt.Errorf("end: %w", err)
	}
	return start, end, nil
}

func instant(dt *calendar.EventDateTime) (time.Time, error) {
	switch {
	case dt == nil:
		return time.Time{}, errors.New("missing")
	case dt.DateTime != "":
		return time.Parse(time.RFC3339, dt.DateTime)
	case dt.Date != "":
		return time.Parse(time.DateOnly, dt.Date)
	}
	return time.Time{}, errors.New("neither date nor dateTime")
}
