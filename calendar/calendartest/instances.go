package calendartest

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/api/calendar/v3"
)

// MethodInstances is events.instances, as RequestsTo counts it.
const MethodInstances = "events.instances"

// QueueInstancesFaults makes the next len(faults) events.instances
// requests on calendarID fail, in order, before any other check.
func (s *Server) QueueInstancesFaults(calendarID string, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.instancesFaults[calendarID] = append(s.instancesFaults[calendarID], faults...)
}

// serveInstances answers events.instances
// (https://developers.google.com/workspace/calendar/api/v3/reference/events/instances):
// "Returns instances of the specified recurring event", with the
// parameters that reference lists: timeMin ("Lower bound (inclusive) for
// an event's end time"; the emulator, as its events.list, keeps it
// exclusive, which is what Google does for events.list), timeMax ("Upper
// bound (exclusive) for an event's start time"), showDeleted ("Whether to
// include deleted events (with status equals "cancelled") in the result"),
// maxResults ("By default the value is 250 events. The page size can never
// be larger than 2500 events"), pageToken, originalStart ("The original
// start time of the instance in the result") and the fields mask. An
// instance is the generated one or the exception that replaced it (moved,
// renamed, cancelled), in the order of their original starts; every
// instance of a cancelled series is cancelled, as events.get says of them.
//
// What Google answers for an ID that names a single event is not
// documented; the emulator answers 400 badRequest, which no client should
// meet. An ID that names nothing (never existed, or purged) is 404
// notFound, as for events.get.
func (s *Server) serveInstances(w http.ResponseWriter, r *http.Request) {
	calendarID, eventID := r.PathValue("calendarId"), r.PathValue("eventId")
	s.mu.Lock()
	if q := s.instancesFaults[calendarID]; len(q) > 0 {
		s.instancesFaults[calendarID] = q[1:]
		s.mu.Unlock()
		if !wait(r, q[0].Delay) {
			return
		}
		if !q[0].delayOnly() {
			serveFault(w, q[0])
			return
		}
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	principal, ok := s.principal(r)
	if !ok {
		writeError(w, http.StatusUnauthorized, "global", "authError", "Invalid Credentials")
		return
	}
	c := s.calendars[calendarID]
	if c == nil || (len(c.readers) > 0 && !c.readers[principal]) {
		writeNotFound(w)
		return
	}
	q := r.URL.Query()
	lq, reason, message := parseInstancesQuery(q)
	if reason != "" {
		writeBadRequest(w, reason, message)
		return
	}
	mask, ok := listFields(w, q)
	if !ok {
		return
	}
	cur, version := c.state(lq.version)
	master := cur.events[eventID]
	switch {
	case master == nil:
		writeNotFound(w)
		return
	case len(master.Recurrence) == 0:
		writeBadRequest(w, "badRequest", "Bad Request")
		return
	}
	items := cur.instances(master, lq, q.Get("originalStart"))
	resp := eventsOf(calendarID, c.busyOnly[principal], items)
	resp.DefaultReminders = c.defaultsFor(c.busyOnly[principal])
	s.cut(resp, items, lq, version)
	writeFields(w, resp, mask)
}

// parseInstancesQuery reads the parameters events.instances takes, as
// parseListQuery does events.list's.
func parseInstancesQuery(q url.Values) (lq listQuery, reason, message string) {
	lq.maxResults = 250
	lq.version = -1
	lq.singleEvents = true
	if reason, message := parseWindow(q, &lq); reason != "" {
		return lq, reason, message
	}
	if v := q.Get("showDeleted"); v != "" {
		var err error
		if lq.showDeleted, err = strconv.ParseBool(v); err != nil {
			return lq, "invalidBoolean", "Invalid boolean value: '" + v + "'."
		}
	}
	reason, message = parsePaging(q, &lq)
	return lq, reason, message
}

// instances returns master's instances matching lq, by original start,
// and only the one of that original start when originalStart is set. The
// server's lock must be held.
func (c *eventSet) instances(master *calendar.Event, lq listQuery, originalStart string) []*calendar.Event {
	insts, err := expand(master, lq.timeMax)
	if err != nil {
		return nil // Put checked the rule
	}
	byID := map[string]*calendar.Event{}
	for _, inst := range insts {
		byID[inst.Id] = inst
	}
	for _, id := range c.order {
		if ev := c.events[id]; ev.RecurringEventId == master.Id {
			byID[id] = clone(ev)
		}
	}
	var want time.Time
	if originalStart != "" {
		want, _ = time.Parse(time.RFC3339, originalStart)
	}
	var out []*calendar.Event
	for _, ev := range byID {
		if master.Status == "cancelled" {
			ev.Status = "cancelled"
		}
		if ev.Status == "cancelled" && !lq.showDeleted {
			continue
		}
		if originalStart != "" && !originalAt(ev, want) {
			continue
		}
		start, end, err := span(ev)
		if err == nil && ((!lq.timeMin.IsZero() && !end.After(lq.timeMin)) || (!lq.timeMax.IsZero() && !start.Before(lq.timeMax))) {
			continue
		}
		out = append(out, ev)
	}
	slices.SortFunc(out, func(a, b *calendar.Event) int {
		oa, _ := instant(a.OriginalStartTime)
		ob, _ := instant(b.OriginalStartTime)
		return cmp.Or(oa.Compare(ob), strings.Compare(a.Id, b.Id))
	})
	return out
}

// originalAt reports whether ev's original start is t.
func originalAt(ev *calendar.Event, t time.Time) bool {
	orig, err := instant(ev.OriginalStartTime)
	return err == nil && orig.Equal(t)
}
