package calendartest

import (
	"errors"
	"fmt"

	"google.golang.org/api/calendar/v3"
)

// SetDefaultReminders sets calendarID's default reminders, which
// events.list and events.instances answer as defaultReminders ("The
// default reminders on the calendar for the authenticated user. These
// reminders apply to all events on this calendar that do not explicitly
// override them", Events list response), creating the calendar. A
// calendar has none until set.
func (s *Server) SetDefaultReminders(calendarID string, rs ...*calendar.EventReminder) error {
	if err := checkOverrides(rs); err != nil {
		return fmt.Errorf("calendartest: default reminders of %s: %w", calendarID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calendar(calendarID)
	c.defaults = make([]*calendar.EventReminder, len(rs))
	for i, r := range rs {
		c.defaults[i] = &calendar.EventReminder{Method: r.Method, Minutes: r.Minutes}
	}
	// A change of the defaults is not a change of an event: an
	// incremental sync lists none, and the events that use them are read
	// with the new ones at their next change or full sync.
	return nil
}

// Popup returns a popup reminder minutes before an event, for Put and
// SetDefaultReminders.
func Popup(minutes int64) *calendar.EventReminder {
	return &calendar.EventReminder{Method: "popup", Minutes: minutes, ForceSendFields: []string{"Minutes"}}
}

// defaultsFor is the defaultReminders of a listing: the calendar's, none
// for a reader of free/busy only, who sees nothing of the calendar but
// times. Never nil: Google sends the field, empty when there are none.
// s.mu is held.
func (c *calendarState) defaultsFor(busyOnly bool) []*calendar.EventReminder {
	if busyOnly || len(c.defaults) == 0 {
		return []*calendar.EventReminder{}
	}
	return c.defaults
}

// checkReminders refuses what Google refuses of an event's reminders:
// overrides beside useDefault ("Cannot specify both default reminders and
// overrides at the same time", Google's 400 cannotUseDefaultRemindersAndSpecifyOverride),
// and overrides checkOverrides refuses.
func checkReminders(r *calendar.EventReminders) error {
	if r == nil {
		return nil
	}
	if r.UseDefault && len(r.Overrides) > 0 {
		return errors.New("cannotUseDefaultRemindersAndSpecifyOverride: cannot specify both default reminders and overrides at the same time")
	}
	return checkOverrides(r.Overrides)
}

// checkOverrides refuses reminders the Events resource does not allow:
// "The maximum number of override reminders is 5", a method other than
// "email" or "popup", minutes outside "between 0 and 40320 (4 weeks in
// minutes)".
func checkOverrides(rs []*calendar.EventReminder) error {
	if len(rs) > 5 {
		return fmt.Errorf("%d reminders: the maximum number of override reminders is 5", len(rs))
	}
	for _, r := range rs {
		switch {
		case r == nil:
			return errors.New("a null reminder")
		case r.Method != "email" && r.Method != "popup":
			return fmt.Errorf("reminder method %q: the method is email or popup", r.Method)
		case r.Minutes < 0 || r.Minutes > 40320:
			return fmt.Errorf("reminder of %d minutes: valid values are between 0 and 40320", r.Minutes)
		}
	}
	return nil
}
