package calendartest

import (
	"cmp"
	"encoding/base64"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/api/calendar/v3"
)

// listQuery is an events.list request's parameters.
type listQuery struct {
	timeMin, timeMax time.Time
	singleEvents     bool
	showDeleted      bool
	orderBy          string
	maxResults       int
	offset           int
	// syncToken asks for the changes since the state it names.
	syncToken string
	// version is the calendar state a page token names, -1 for none:
	// every page of one list is cut from the same state.
	version int64
}

// parseListQuery reads and checks the parameters as the API does, naming
// the reason of a 400 answer.
func parseListQuery(q url.Values) (lq listQuery, reason, message string) {
	lq.maxResults = 250
	lq.version = -1
	if lq.syncToken = q.Get("syncToken"); lq.syncToken != "" {
		if reason, message := checkSyncQuery(q); reason != "" {
			return lq, reason, message
		}
	}
	if reason, message := parseWindow(q, &lq); reason != "" {
		return lq, reason, message
	}
	var err error
	for _, p := range []struct {
		name string
		dst  *bool
	}{{"singleEvents", &lq.singleEvents}, {"showDeleted", &lq.showDeleted}} {
		if v := q.Get(p.name); v != "" {
			if *p.dst, err = strconv.ParseBool(v); err != nil {
				return lq, "invalidBoolean", "Invalid boolean value: '" + v + "'."
			}
		}
	}
	switch lq.orderBy = q.Get("orderBy"); lq.orderBy {
	case "", "updated":
	case "startTime":
		if !lq.singleEvents {
			return lq, "badRequest", "The requested ordering is not available for the particular query."
		}
	default:
		return lq, "invalidParameter", "Invalid value for: orderBy"
	}
	reason, message = parsePaging(q, &lq)
	return lq, reason, message
}

// parseWindow reads timeMin and timeMax as events.list and
// events.instances take them, naming the reason of a 400 answer.
func parseWindow(q url.Values, lq *listQuery) (reason, message string) {
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"timeMin", &lq.timeMin}, {"timeMax", &lq.timeMax}} {
		if v := q.Get(p.name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return "badRequest", "Bad Request"
			}
			// Milliseconds may be provided but are ignored.
			*p.dst = t.Truncate(time.Second)
		}
	}
	if !lq.timeMin.IsZero() && !lq.timeMax.IsZero() && !lq.timeMax.After(lq.timeMin) {
		return "timeRangeEmpty", "The specified time range is empty."
	}
	return "", ""
}

// parsePaging reads maxResults and pageToken as events.list and
// events.instances take them, naming the reason of a 400 answer.
func parsePaging(q url.Values, lq *listQuery) (reason, message string) {
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return "invalid", "Invalid value '" + v + "'. Values must be within the range: [1, 2500]"
		}
		lq.maxResults = min(n, 2500)
	}
	if v := q.Get("pageToken"); v != "" {
		var ok bool
		if lq.offset, lq.version, ok = parsePageToken(v); !ok {
			return "invalid", "Invalid page token value."
		}
	}
	return "", ""
}

// pageToken names the page of a list that starts at offset, cut from the
// calendar state version.
func pageToken(offset int, version int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(offset) + "@" + strconv.FormatInt(version, 10)))
}

func parsePageToken(v string) (offset int, version int64, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return 0, 0, false
	}
	rest, found := strings.CutPrefix(string(b), "offset:")
	n, ver, _ := strings.Cut(rest, "@")
	if offset, err = strconv.Atoi(n); err != nil || !found || offset < 0 {
		return 0, 0, false
	}
	if version, err = strconv.ParseInt(ver, 10, 64); err != nil || version < 0 {
		return 0, 0, false
	}
	return offset, version, true
}

func (s *Server) serveList(w http.ResponseWriter, r *http.Request) {
	calendarID := r.PathValue("calendarId")
	s.mu.Lock()
	s.requests[calendarID]++
	s.lastQuery[calendarID] = r.URL.Query()
	s.userProject[calendarID] = r.Header.Get("X-Goog-User-Project")
	if f, ok := s.nextFault(calendarID); ok {
		s.mu.Unlock()
		if !wait(r, f.Delay) {
			return
		}
		if !f.delayOnly() {
			serveFault(w, f)
			return
		}
		s.mu.Lock()
	}
	locked := true
	defer func() {
		if locked {
			s.mu.Unlock()
		}
	}()
	principal, personal, ok := s.caller(r)
	if !ok {
		writeError(w, http.StatusUnauthorized, "global", "authError", "Invalid Credentials")
		return
	}
	if s.needQuota && principal == s.userEmail && r.Header.Get("X-Goog-User-Project") == "" {
		writeError(w, http.StatusForbidden, "usageLimits", "accessNotConfigured", QuotaProjectMessage)
		return
	}
	c := s.calendars[calendarID]
	if !s.mayRead(c, calendarID, principal, personal) {
		writeNotFound(w)
		return
	}
	lq, reason, message := parseListQuery(r.URL.Query())
	if reason != "" {
		writeBadRequest(w, reason, message)
		return
	}
	mask, ok := listFields(w, r.URL.Query())
	if !ok {
		return
	}
	// Every page of one list is cut from the state its first page saw.
	cur, version := c.state(lq.version)
	var items []*calendar.Event
	if lq.syncToken != "" {
		since, ok := c.since(lq.syncToken)
		if !ok {
			writeError(w, http.StatusGone, "global", "fullSyncRequired", "Sync token is no longer valid, a full sync is required.")
			return
		}
		items = s.delta(since, cur, lq)
	} else {
		items = cur.list(lq)
	}
	resp := eventsOf(calendarID, c.busyOnly[principal], items)
	resp.DefaultReminders = c.defaultsFor(c.busyOnly[principal])
	if s.emptyPages[calendarID] > 0 {
		s.emptyPages[calendarID]--
		resp.NextPageToken = pageToken(lq.offset, version)
	} else if !s.cut(resp, items, lq, version) {
		resp.NextSyncToken = c.syncToken(version)
	}
	// The items are copies, or kept states' events, which are never
	// changed: encoding them needs no lock. Only the fields asked for
	// travel, as the API's partial responses do: a client that forgets
	// one in its mask sees it missing here too.
	s.mu.Unlock()
	locked = false
	writeFields(w, resp, mask)
}

// listFields reads the fields selector of an events.list or
// events.instances, checked against the Events resource; false, with the
// answer written, when it names a field the resource lacks.
func listFields(w http.ResponseWriter, q url.Values) (fieldMask, bool) {
	f := q.Get("fields")
	if f == "" {
		return nil, true
	}
	mask, err := checkedFields(f, reflect.TypeFor[calendar.Events]())
	if err != nil {
		writeBadRequest(w, "invalidParameter", err.Error())
		return nil, false
	}
	return mask, true
}

// eventsOf is a list's answer around items; a reader of free/busy only
// sees each event's times and nothing of it else.
func eventsOf(calendarID string, busyOnly bool, items []*calendar.Event) *calendar.Events {
	resp := &calendar.Events{
		Kind:       "calendar#events",
		Etag:       `"p33c9h2ruqvf8g0o"`,
		Summary:    calendarID,
		TimeZone:   "UTC",
		AccessRole: "reader",
		Updated:    "2026-01-01T00:00:00.000Z",
	}
	if busyOnly {
		resp.AccessRole = "freeBusyReader"
		resp.Summary = ""
		for i, ev := range items {
			items[i] = &calendar.Event{Kind: ev.Kind, Etag: ev.Etag, Id: ev.Id, Status: ev.Status, Start: ev.Start, End: ev.End}
		}
	}
	return resp
}

// cut puts the page of items lq asks for in resp, and the next page's
// token when there is one; it reports whether there is.
func (s *Server) cut(resp *calendar.Events, items []*calendar.Event, lq listQuery, version int64) bool {
	size := lq.maxResults
	if s.pageSize > 0 {
		size = min(size, s.pageSize)
	}
	lo := min(lq.offset, len(items))
	hi := min(lo+size, len(items))
	resp.Items = items[lo:hi]
	if hi < len(items) {
		resp.NextPageToken = pageToken(hi, version)
		return true
	}
	return false
}

// writeFields writes v's JSON, with only the fields mask selects (all
// when nil), as the API's partial responses do.
func writeFields(w http.ResponseWriter, v any, mask fieldMask) {
	b, err := encodeFields(v, mask)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "global", "backendError", "Backend Error")
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Write(b)
}

// list returns the events matching lq, in the requested order. The
// server's lock must be held.
func (c *eventSet) list(lq listQuery) []*calendar.Event {
	var out []*calendar.Event
	overlaps := func(ev *calendar.Event) bool {
		start, end, err := span(ev)
		if err != nil {
			return true // let the client see, and skip, what it cannot read
		}
		return (lq.timeMin.IsZero() || end.After(lq.timeMin)) && (lq.timeMax.IsZero() || start.Before(lq.timeMax))
	}
	add := func(ev *calendar.Event) {
		if overlaps(ev) {
			out = append(out, clone(ev))
		}
	}
	// Series expand up to timeMax, or as far as Google expands them.
	horizon := lq.timeMax
	for _, id := range c.order {
		ev := c.events[id]
		cancelled := ev.Status == "cancelled"
		switch {
		case ev.RecurringEventId != "":
			// An exception: a moved or cancelled instance. Cancelled
			// instances are listed when showDeleted and singleEvents are
			// both false, or both true.
			master := c.events[ev.RecurringEventId]
			if lq.singleEvents && master != nil && master.Status == "cancelled" {
				continue
			}
			if !cancelled || lq.showDeleted == lq.singleEvents {
				add(ev)
			}
		case len(ev.Recurrence) > 0 && lq.singleEvents:
			if cancelled {
				continue
			}
			insts, err := expand(ev, horizon)
			if err != nil {
				continue // Put checked the rule
			}
			for _, inst := range insts {
				if _, ok := c.events[inst.Id]; !ok {
					add(inst)
				}
			}
		case len(ev.Recurrence) > 0:
			if cancelled && !lq.showDeleted {
				continue
			}
			insts, _ := expand(ev, horizon)
			if seriesOverlaps(insts, lq) {
				out = append(out, clone(ev))
			}
		default:
			if !cancelled || lq.showDeleted {
				add(ev)
			}
		}
	}
	switch lq.orderBy {
	case "startTime":
		slices.SortStableFunc(out, func(a, b *calendar.Event) int {
			sa, _, _ := span(a)
			sb, _, _ := span(b)
			return cmp.Or(sa.Compare(sb), strings.Compare(a.Id, b.Id))
		})
	case "updated":
		slices.SortStableFunc(out, func(a, b *calendar.Event) int { return strings.Compare(a.Updated, b.Updated) })
	}
	return out
}

// seriesOverlaps reports whether any instance of a series falls in the
// window; a series listed unexpanded is returned when one does.
func seriesOverlaps(insts []*calendar.Event, lq listQuery) bool {
	for _, inst := range insts {
		_, end, err := span(inst)
		if err == nil && (lq.timeMin.IsZero() || end.After(lq.timeMin)) {
			return true
		}
	}
	return false
}
