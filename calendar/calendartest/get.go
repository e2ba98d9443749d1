package calendartest

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"

	"google.golang.org/api/calendar/v3"
)

// Deleted is 410 deleted, which Google answers for an event that was
// deleted ("Resource has been deleted"), e.g. to a second delete. Queue it
// with QueueGetFaults to answer an events.get with it.
var Deleted = Fault{Status: http.StatusGone, Domain: "global", Reason: "deleted", Message: "Resource has been deleted"}

// QueueGetFaults makes the next len(faults) events.get requests on
// calendarID fail, in order, before any other check. The faults of
// QueueFaults are events.list's alone.
func (s *Server) QueueGetFaults(calendarID string, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.getFaults[calendarID] = append(s.getFaults[calendarID], faults...)
}

// Purge removes an event stored with Put (a single event, or a series with
// its exceptions) for good, as an event deleted and then emptied from the
// calendar's trash: events.list no longer returns it, even with
// showDeleted, and events.get answers 404 notFound, as for an id that never
// existed. Delete, which Google's API does, keeps the event as cancelled
// instead. An instance of a series is cancelled with Delete, not purged.
func (s *Server) Purge(calendarID, eventID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calendars[calendarID]
	if c == nil {
		return fmt.Errorf("calendartest: calendar %s not found", calendarID)
	}
	ev, ok := c.events[eventID]
	switch {
	case !ok:
		return fmt.Errorf("calendartest: purge: no event %s in %s", eventID, calendarID)
	case ev.RecurringEventId != "":
		return fmt.Errorf("calendartest: purge: %s is an instance of %s; Delete it, or purge the series", eventID, ev.RecurringEventId)
	}
	c.order = slices.DeleteFunc(c.order, func(id string) bool {
		if id == eventID || c.events[id].RecurringEventId == eventID {
			delete(c.events, id)
			return true
		}
		return false
	})
	s.changed(c)
	return nil
}

// serveGet answers events.get as documented: the event, the series or the
// one instance of a series the id names (a generated instance id, e.g.
// "standup_20261130T090000Z", included), with only the fields asked for.
// A deleted event or instance is answered with status "cancelled", as
// Google keeps it; an id that names nothing is 404 notFound.
func (s *Server) serveGet(w http.ResponseWriter, r *http.Request) {
	calendarID, eventID := r.PathValue("calendarId"), r.PathValue("eventId")
	s.mu.Lock()
	if q := s.getFaults[calendarID]; len(q) > 0 {
		s.getFaults[calendarID] = q[1:]
		s.mu.Unlock()
		serveFault(w, q[0])
		return
	}
	defer s.mu.Unlock()
	principal, personal, ok := s.caller(r)
	if !ok {
		writeError(w, http.StatusUnauthorized, "global", "authError", "Invalid Credentials")
		return
	}
	c := s.calendars[calendarID]
	if !s.mayRead(c, calendarID, principal, personal) {
		writeNotFound(w)
		return
	}
	var mask fieldMask
	if f := r.URL.Query().Get("fields"); f != "" {
		var err error
		mask, err = checkedFields(f, reflect.TypeFor[calendar.Event]())
		if err != nil {
			writeBadRequest(w, "invalidParameter", err.Error())
			return
		}
	}
	ev := c.get(eventID)
	if ev == nil {
		writeNotFound(w)
		return
	}
	b, err := encodeFields(ev, mask)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "global", "backendError", "Backend Error")
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Write(b)
}

// get returns a copy of what eventID names, or nil. An instance of a
// cancelled series is cancelled too. The server's lock must be held.
func (c *eventSet) get(eventID string) *calendar.Event {
	ev, ok := c.events[eventID]
	if ok {
		ev = clone(ev)
	} else {
		inst, err := c.generatedInstance(eventID)
		if err != nil {
			return nil
		}
		ev = inst
	}
	if master := c.events[ev.RecurringEventId]; ev.RecurringEventId != "" && master != nil && master.Status == "cancelled" {
		ev.Status = "cancelled"
	}
	return ev
}
