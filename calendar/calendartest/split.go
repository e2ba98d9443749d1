package calendartest

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"google.golang.org/api/calendar/v3"
)

// SplitFollowing edits "this and following events" of a series from one
// of its instances, as Google Calendar does: API clients then see two
// series. The old series is cut before the instance (its RRULE gets an
// UNTIL one second before the instance's original start, and its
// exceptions from there on are dropped); a new series with its own id and
// iCalUID runs from the instance with the rest of the rule (COUNT reduced
// by the instances left behind). edit, if not nil, changes the new series
// (its title, its times) before it is stored. SplitFollowing returns the
// new series.
//
// The new series' id is the old one, "_R" and the instance's original
// start in UTC (e.g. "standup_R20261130T090000"), the form Google gives a
// series it splits off; the new instances' ids, recurringEventId and
// originalStartTime follow from it, as for any series. Splitting at a
// series' first instance is an edit of the whole series: Put the series.
func (s *Server) SplitFollowing(calendarID, instanceID string, edit func(*calendar.Event)) (*calendar.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calendars[calendarID]
	if c == nil {
		return nil, fmt.Errorf("calendartest: calendar %s not found", calendarID)
	}
	first, err := c.generatedInstance(instanceID) // checks the id names an instance of a live series
	if err != nil {
		return nil, err
	}
	master := c.events[first.RecurringEventId]
	if master.Status == "cancelled" {
		return nil, fmt.Errorf("calendartest: series %s is cancelled", master.Id)
	}
	orig, err := time.Parse(time.RFC3339, first.OriginalStartTime.DateTime)
	if err != nil {
		return nil, fmt.Errorf("calendartest: %s: original start: %w", instanceID, err)
	}
	before, err := expand(master, orig)
	if err != nil {
		return nil, err
	}
	if len(before) == 0 {
		return nil, fmt.Errorf("calendartest: %s is the first instance of %s; splitting there edits the whole series, Put it instead", instanceID, master.Id)
	}
	r, err := parseRecurrence(master.Recurrence)
	if err != nil {
		return nil, err
	}
	count := 0
	if r.count > 0 {
		count = r.count - len(before)
	}

	next := clone(master)
	next.Id = master.Id + "_R" + orig.UTC().Format("20060102T150405")
	next.ICalUID = next.Id + "@google.com"
	next.HtmlLink = htmlLink(next.Id)
	next.Start, next.End = first.Start, first.End
	next.Recurrence = []string{withBounds(master.Recurrence[0], count, r.until)}
	if edit != nil {
		edit(next)
	}
	if next.Id == master.Id || c.events[next.Id] != nil {
		return nil, fmt.Errorf("calendartest: split %s: id %s is taken", instanceID, next.Id)
	}
	if err := checkSeries(next); err != nil {
		return nil, fmt.Errorf("calendartest: split %s: %w", instanceID, err)
	}

	master = clone(master) // stored events are replaced, never changed
	master.Recurrence = []string{withBounds(master.Recurrence[0], 0, orig.Add(-time.Second))}
	c.events[master.Id] = master
	kept := c.order[:0]
	for _, id := range c.order {
		ev := c.events[id]
		if ev.RecurringEventId == master.Id && !originalBefore(ev, orig) {
			delete(c.events, id)
			continue
		}
		kept = append(kept, id)
	}
	c.order = append(kept, next.Id)
	c.events[next.Id] = next
	s.changed(c)
	return clone(next), nil
}

// withBounds rewrites an RRULE line with COUNT count (none if 0) and UNTIL
// until (none if zero), keeping its other parts.
func withBounds(line string, count int, until time.Time) string {
	body := strings.TrimPrefix(line, "RRULE:")
	var parts []string
	for part := range strings.SplitSeq(body, ";") {
		if k, _, _ := strings.Cut(part, "="); k != "COUNT" && k != "UNTIL" {
			parts = append(parts, part)
		}
	}
	if count > 0 {
		parts = append(parts, "COUNT="+strconv.Itoa(count))
	}
	if !until.IsZero() {
		parts = append(parts, "UNTIL="+until.UTC().Format("20060102T150405Z"))
	}
	return "RRULE:" + strings.Join(parts, ";")
}

// originalBefore reports whether an exception's original start is before t;
// one without a readable original start counts as before, and is kept.
func originalBefore(ev *calendar.Event, t time.Time) bool {
	if ev.OriginalStartTime == nil {
		return true
	}
	orig, err := instant(ev.OriginalStartTime)
	if err != nil {
		return true
	}
	return orig.Before(t)
}
