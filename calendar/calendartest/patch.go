package calendartest

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"google.golang.org/api/calendar/v3"
)

// events.patch, as the Calendar API documents it, for people answering
// their invitations:
//
//   - Patch semantics (Events: patch): "The field values you specify
//     replace the existing values. Fields that you don't specify in the
//     request remain unchanged. Array fields, if specified, overwrite the
//     existing arrays; this discards any previous array elements."
//   - attendeesOmitted (Events resource): "When updating an event, this
//     can be used to only update the participant's response": with it, the
//     attendees given update those entries and every other stays.
//   - ETags (Calendar API guide "Get specific versions of resources",
//     conditional modification): every event has an etag that changes with
//     every change; a write with If-Match is made only while the etag is
//     still the one given, "Otherwise, the server returns a 412
//     Precondition Failed response code". Put and every write give the
//     event a new etag.
//   - Scopes (Events: patch, Authorization): a write needs
//     .../auth/calendar or .../auth/calendar.events; a person's token with
//     only calendar.events.readonly gets 403 "Request had insufficient
//     authentication scopes.", reason insufficientPermissions (the body
//     analogdotnow/Analog#296 quotes). The bot's own credentials ask for
//     calendar.readonly, so they are refused alike.
//   - A calendar shared with the person but not theirs is read-only: 403
//     requiredAccessLevel "You need to have writer access to this
//     calendar." (as phw198/OutlookGoogleCalendarSync#968 quotes).
//   - Each attendee's copy of an event is their own: an attendee who is
//     not the organizer may change their own entry (responseStatus,
//     comment, additionalGuests) and their copy's private properties
//     (reminders, colorId, transparency); changing another attendee or a
//     shared property is 403 forbiddenForNonOrganizer "Shared properties
//     can only be changed by the organizer of the event." (as
//     kewisch/gdata-provider#426 quotes). An answer reaches the
//     organizer's copy, and every other copy of the event (same iCalUID),
//     as Google Calendar shows the organizer and the guests who answered
//     ("Respond to event invitations",
//     https://support.google.com/calendar/answer/37135).
//   - sendUpdates is "all", "externalOnly" or "none"; it is recorded with
//     each write (Writes), since which guests Google emails is not
//     emulated.
//
// An instance of a series that is not stored on its own becomes an
// exception of the series when written, as Google keeps a modified
// occurrence.

// Write is one events.patch the server applied.
type Write struct {
	Calendar, Event string
	// By is the principal that wrote: a person's email.
	By string
	// SendUpdates is the request's sendUpdates, "" when it gave none
	// (Google then sends nothing).
	SendUpdates string
	// IfMatch is the request's If-Match header, "" when it had none.
	IfMatch string
	// Changes says what changed in the calendar's copy, one line per
	// field, "attendees[alice@example.com].responseStatus: needsAction ->
	// accepted"; etag and updated are left out, since every write changes
	// them.
	Changes []string
}

// PreconditionFailed is 412 conditionNotMet, Google's answer to a write
// whose If-Match is not the event's etag any more.
var PreconditionFailed = Fault{Status: http.StatusPreconditionFailed, Domain: "global", Reason: "conditionNotMet", Message: "Precondition Failed"}

// Writes returns the events.patch requests the server applied, in order.
func (s *Server) Writes() []Write {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.writes)
}

// QueuePatchFaults makes the next len(faults) events.patch requests on
// calendarID fail, in order, before any other check.
func (s *Server) QueuePatchFaults(calendarID string, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.patchFaults[calendarID] = append(s.patchFaults[calendarID], faults...)
}

// Interleave makes the next events.patch of eventID on calendarID find the
// event changed by change first, as another writer's change landing
// between the caller's read and its write would: the event gets a new
// etag, so a write with the etag read before is answered 412. change
// gets a copy of the event and returns nothing; the copy is stored, in
// calendarID only.
func (s *Server) Interleave(calendarID, eventID string, change func(ev *calendar.Event)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.interleave == nil {
		s.interleave = map[string]func(*calendar.Event){}
	}
	s.interleave[calendarID+"\x00"+eventID] = change
}

// newEtag returns a fresh etag, quoted as Google's are ("\"3181161784712000\"").
func newEtag() string { return `"` + strings.ToLower(rand.Text()[:16]) + `"` }

// writeScopes are the scopes events.patch accepts.
var writeScopes = []string{"https://www.googleapis.com/auth/calendar", "https://www.googleapis.com/auth/calendar.events"}

func (s *Server) servePatch(w http.ResponseWriter, r *http.Request) {
	calendarID, eventID := r.PathValue("calendarId"), r.PathValue("eventId")
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		writeBadRequest(w, "parseError", "cannot read the body")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.patchFaults[calendarID]; len(q) > 0 {
		s.patchFaults[calendarID] = q[1:]
		serveFault(w, q[0])
		return
	}
	c, principal, ok := s.mayPatch(w, r, calendarID)
	if !ok {
		return
	}
	if change := s.interleave[calendarID+"\x00"+eventID]; change != nil {
		delete(s.interleave, calendarID+"\x00"+eventID)
		if ev := c.get(eventID); ev != nil {
			change(ev)
			ev.Etag = newEtag()
			s.store(c, ev)
		}
	}
	cur := c.get(eventID)
	if cur == nil {
		writeNotFound(w)
		return
	}
	if m := r.Header.Get("If-Match"); m != "" && m != cur.Etag {
		serveFault(w, PreconditionFailed)
		return
	}
	var fields map[string]json.RawMessage
	var given calendar.Event
	if json.Unmarshal(body, &fields) != nil || json.Unmarshal(body, &given) != nil {
		writeBadRequest(w, "parseError", "Parse Error")
		return
	}
	next, reason := patched(cur, fields, &given, calendarID)
	if reason != "" {
		writeError(w, http.StatusForbidden, "calendar", "forbiddenForNonOrganizer", reason)
		return
	}
	next.Etag = newEtag()
	next.Updated = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	s.store(c, next)
	s.writes = append(s.writes, Write{
		Calendar: calendarID, Event: eventID, By: principal, SendUpdates: r.URL.Query().Get("sendUpdates"),
		IfMatch: r.Header.Get("If-Match"), Changes: changedFields(cur, next),
	})
	s.propagate(calendarID, next)
	var mask fieldMask
	if f := r.URL.Query().Get("fields"); f != "" {
		if mask, err = parseFields(f); err != nil {
			writeBadRequest(w, "invalidParameter", err.Error())
			return
		}
	}
	writeFields(w, next, mask)
}

// mayPatch checks that the caller of an events.patch on calendarID may
// write it, as Google does: a person's own token, granted a write scope,
// on their own calendar, with a sendUpdates Google knows. It returns the
// calendar and the caller, or false with the refusal written. s.mu must
// be held.
func (s *Server) mayPatch(w http.ResponseWriter, r *http.Request, calendarID string) (*calendarState, string, bool) {
	principal, personal, ok := s.caller(r)
	if !ok {
		writeError(w, http.StatusUnauthorized, "global", "authError", "Invalid Credentials")
		return nil, "", false
	}
	c := s.calendars[calendarID]
	if !s.mayRead(c, calendarID, principal, personal) {
		writeNotFound(w)
		return nil, "", false
	}
	if !personal || !s.grantsAny(r, writeScopes) {
		writeError(w, http.StatusForbidden, "global", "insufficientPermissions", "Request had insufficient authentication scopes.")
		return nil, "", false
	}
	if !strings.EqualFold(calendarID, principal) {
		writeError(w, http.StatusForbidden, "calendar", "requiredAccessLevel", "You need to have writer access to this calendar.")
		return nil, "", false
	}
	switch v := r.URL.Query().Get("sendUpdates"); v {
	case "", "all", "externalOnly", "none":
	default:
		writeBadRequest(w, "invalidParameter", "Invalid value for sendUpdates: "+v)
		return nil, "", false
	}
	return c, principal, true
}

// grantsAny reports whether the request's token was granted one of
// scopes. s.mu must be held.
func (s *Server) grantsAny(r *http.Request, scopes []string) bool {
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	g := s.oauth.personal[token]
	if g == nil {
		return false
	}
	for _, sc := range scopes {
		if slices.Contains(g.scopes, sc) {
			return true
		}
	}
	return false
}

// store keeps ev in c, an instance of a series becoming an exception of
// it. s.mu must be held.
func (s *Server) store(c *calendarState, ev *calendar.Event) {
	if _, ok := c.events[ev.Id]; !ok {
		c.order = append(c.order, ev.Id)
	}
	c.events[ev.Id] = ev
	s.changed(c)
}

// mutable are the fields of an attendee's own copy they may change
// without being the organizer.
var mutable = map[string]bool{"attendees": true, "attendeesOmitted": true, "reminders": true, "colorId": true, "transparency": true}

// ownEntry are the fields of an attendee entry its attendee may change.
var ownEntry = map[string]bool{"responseStatus": true, "comment": true, "additionalGuests": true}

// patched returns cur with the fields of the request applied, or why a
// caller who is not the organizer may not make the change.
func patched(cur *calendar.Event, fields map[string]json.RawMessage, given *calendar.Event, calendarID string) (*calendar.Event, string) {
	organizer := cur.Organizer != nil && (cur.Organizer.Self || strings.EqualFold(cur.Organizer.Email, calendarID))
	const refused = "Shared properties can only be changed by the organizer of the event."
	if !organizer {
		for name := range fields {
			if !mutable[name] {
				return nil, refused
			}
		}
	}
	// Every field but attendees is replaced as given: through JSON, so
	// that only the fields the request named change.
	var tree map[string]json.RawMessage
	b, _ := json.Marshal(cur)
	json.Unmarshal(b, &tree)
	for name, v := range fields {
		if name != "attendees" && name != "attendeesOmitted" {
			tree[name] = v
		}
	}
	b, _ = json.Marshal(tree)
	next := &calendar.Event{}
	json.Unmarshal(b, next)
	if _, ok := fields["attendees"]; !ok {
		return next, ""
	}
	mine := func(a *calendar.EventAttendee) bool {
		return a != nil && (a.Self || strings.EqualFold(a.Email, calendarID))
	}
	if given.AttendeesOmitted {
		// Update the entries given; keep every other.
		next.Attendees = nil
		for _, a := range cur.Attendees {
			a = cloneAttendee(a)
			for _, g := range given.Attendees {
				if g == nil || !strings.EqualFold(g.Email, a.Email) {
					continue
				}
				if !organizer && !mine(a) {
					return nil, refused
				}
				if g.ResponseStatus != "" {
					a.ResponseStatus = g.ResponseStatus
				}
				a.Comment, a.AdditionalGuests = g.Comment, g.AdditionalGuests
			}
			next.Attendees = append(next.Attendees, a)
		}
		return next, ""
	}
	next.Attendees = given.Attendees
	if organizer {
		return next, ""
	}
	// A guest's list must keep everyone else's entry as it was, and
	// change only what their own entry may.
	if len(given.Attendees) != len(cur.Attendees) {
		return nil, refused
	}
	for _, a := range cur.Attendees {
		i := slices.IndexFunc(given.Attendees, func(g *calendar.EventAttendee) bool {
			return g != nil && a != nil && strings.EqualFold(g.Email, a.Email)
		})
		if i < 0 {
			return nil, refused
		}
		for field := range differ(a, given.Attendees[i]) {
			if !mine(a) || !ownEntry[field] {
				return nil, refused
			}
		}
	}
	return next, ""
}

func cloneAttendee(a *calendar.EventAttendee) *calendar.EventAttendee {
	if a == nil {
		return nil
	}
	c := *a
	return &c
}

// differ returns the JSON fields in which a and b differ; self, which the
// server sets per copy, is left out.
func differ(a, b any) map[string]bool {
	flat := func(v any) map[string]string {
		var m map[string]json.RawMessage
		j, _ := json.Marshal(v)
		json.Unmarshal(j, &m)
		out := map[string]string{}
		for k, raw := range m {
			out[k] = string(raw)
		}
		return out
	}
	fa, fb := flat(a), flat(b)
	out := map[string]bool{}
	for k := range fa {
		if k != "self" && fa[k] != fb[k] {
			out[k] = true
		}
	}
	for k := range fb {
		if _, ok := fa[k]; !ok && k != "self" {
			out[k] = true
		}
	}
	return out
}

// changedFields describes what differs from cur to next, one line per field.
func changedFields(cur, next *calendar.Event) []string {
	var out []string
	for field := range differ(cur, next) {
		switch field {
		case "etag", "updated", "attendees":
			continue
		}
		out = append(out, field)
	}
	emails := map[string]bool{}
	byEmail := func(list []*calendar.EventAttendee) map[string]*calendar.EventAttendee {
		m := map[string]*calendar.EventAttendee{}
		for _, a := range list {
			if a != nil {
				m[strings.ToLower(a.Email)] = a
				emails[strings.ToLower(a.Email)] = true
			}
		}
		return m
	}
	before, after := byEmail(cur.Attendees), byEmail(next.Attendees)
	for email := range emails {
		a, b := before[email], after[email]
		switch {
		case a == nil:
			out = append(out, fmt.Sprintf("attendees[%s]: added", email))
		case b == nil:
			out = append(out, fmt.Sprintf("attendees[%s]: removed", email))
		default:
			for field := range differ(a, b) {
				if field == "responseStatus" {
					out = append(out, fmt.Sprintf("attendees[%s].responseStatus: %s -> %s", email, a.ResponseStatus, b.ResponseStatus))
					continue
				}
				out = append(out, fmt.Sprintf("attendees[%s].%s", email, field))
			}
		}
	}
	sort.Strings(out)
	return out
}

// propagate carries the answer of calendarID's owner in ev to every other
// copy of the event: each calendar holding an event with its iCalUID (or
// id) and an entry for them. s.mu must be held.
func (s *Server) propagate(calendarID string, ev *calendar.Event) {
	var status string
	for _, a := range ev.Attendees {
		if a != nil && strings.EqualFold(a.Email, calendarID) {
			status = a.ResponseStatus
		}
	}
	if status == "" {
		return
	}
	for id, c := range s.calendars {
		if id == calendarID {
			continue
		}
		for _, other := range c.events {
			if other.Id != ev.Id && (ev.ICalUID == "" || other.ICalUID != ev.ICalUID) {
				continue
			}
			i := slices.IndexFunc(other.Attendees, func(a *calendar.EventAttendee) bool {
				return a != nil && strings.EqualFold(a.Email, calendarID)
			})
			if i < 0 || other.Attendees[i].ResponseStatus == status {
				continue
			}
			copied := clone(other)
			copied.Attendees[i].ResponseStatus = status
			copied.Etag = newEtag()
			s.store(c, copied)
			break
		}
	}
}
