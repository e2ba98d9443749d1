package calendartest

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/api/calendar/v3"
)

// rule is the subset of an RFC 5545 RRULE the emulator expands:
// FREQ=DAILY|WEEKLY with INTERVAL, COUNT, UNTIL and, weekly, BYDAY.
type rule struct {
	weekly   bool
	interval int
	count    int
	until    time.Time
	byDay    []time.Weekday
}

var weekdays = map[string]time.Weekday{
	"MO": time.Monday, "TU": time.Tuesday, "WE": time.Wednesday, "TH": time.Thursday,
	"FR": time.Friday, "SA": time.Saturday, "SU": time.Sunday,
}

// parseRecurrence reads an event's recurrence lines; only one RRULE is
// supported.
func parseRecurrence(lines []string) (rule, error) {
	r := rule{interval: 1}
	if len(lines) != 1 {
		return r, fmt.Errorf("recurrence: want exactly one RRULE line, got %d lines", len(lines))
	}
	body, ok := strings.CutPrefix(lines[0], "RRULE:")
	if !ok {
		return r, fmt.Errorf("recurrence: %q: only RRULE is supported", lines[0])
	}
	var freq string
	for part := range strings.SplitSeq(body, ";") {
		k, v, _ := strings.Cut(part, "=")
		var err error
		switch k {
		case "FREQ":
			freq = v
		case "INTERVAL":
			r.interval, err = strconv.Atoi(v)
			if err == nil && r.interval < 1 {
				err = errors.New("must be at least 1")
			}
		case "COUNT":
			r.count, err = strconv.Atoi(v)
		case "UNTIL":
			r.until, err = time.Parse("20060102T150405Z", v)
			if err != nil {
				r.until, err = time.Parse("20060102", v)
				r.until = r.until.Add(24*time.Hour - time.Second)
			}
		case "BYDAY":
			for d := range strings.SplitSeq(v, ",") {
				wd, ok := weekdays[d]
				if !ok {
					return r, fmt.Errorf("recurrence: BYDAY %q: want MO..SU", d)
				}
				r.byDay = append(r.byDay, wd)
			}
		case "WKST":
		default:
			return r, fmt.Errorf("recurrence: %s is not supported", k)
		}
		if err != nil {
			return r, fmt.Errorf("recurrence: %s: %w", k, err)
		}
	}
	switch freq {
	case "DAILY":
	case "WEEKLY":
		r.weekly = true
	default:
		return r, fmt.Errorf("recurrence: FREQ=%q: want DAILY or WEEKLY", freq)
	}
	if len(r.byDay) > 0 && !r.weekly {
		return r, errors.New("recurrence: BYDAY needs FREQ=WEEKLY")
	}
	// Monday-first order, so a week's days come out chronologically.
	slices.SortFunc(r.byDay, func(a, b time.Weekday) int { return mondayIndex(a) - mondayIndex(b) })
	return r, nil
}

func mondayIndex(d time.Weekday) int { return (int(d) + 6) % 7 }

// How far Google expands a series, when nothing else (COUNT, UNTIL, a
// list's timeMax) stops it sooner: 730 instances from its first, or 100
// years, whichever comes first. Google documents no limit; these are what
// others found of the real service. A daily series without an end comes
// back as "a total of 730 recurring event instances"
// (SwitchbackTech/compass#797); a weekly one is expanded "~14 years (~730
// instances) ahead in one burst" (a Zapier integration's notes); a client
// library caps its own expansion likewise ("Google limits their recurrence
// generations to 730 instances", citing the Google Calendar help thread
// "Daily recurring event has stopped recurring"); and "as it is handled in
// google calendar, 730 occurrences or 100 years (whichever comes first)"
// (odoo/odoo#41895). So an incremental sync that reports a change of a
// weekly series without an end lists instances some 14 years ahead,
// hundreds of them, every one outside a client's window.
const (
	maxInstances = 730
	maxYears     = 100
)

// occurrences returns the original start instants of a series whose first
// instance starts at start (with its wall clock read in loc), up to and
// excluding horizon, or as far as Google expands it when horizon is zero.
func (r rule) occurrences(start time.Time, loc *time.Location, horizon time.Time) []time.Time {
	start = start.In(loc)
	y, m, d := start.Date()
	hh, mm, ss := start.Clock()
	firstDay := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	last := start.AddDate(maxYears, 0, 0)
	var out []time.Time
	emit := func(day time.Time) bool {
		t := wallClock(day.Year(), day.Month(), day.Day(), hh, mm, ss, loc)
		if (r.count > 0 && len(out) >= r.count) || (!r.until.IsZero() && t.After(r.until)) ||
			(!horizon.IsZero() && !t.Before(horizon)) || len(out) >= maxInstances || !t.Before(last) {
			return false
		}
		out = append(out, t)
		return true
	}
	for k := 0; ; k++ {
		switch {
		case !r.weekly:
			if !emit(firstDay.AddDate(0, 0, k*r.interval)) {
				return out
			}
		case len(r.byDay) == 0:
			if !emit(firstDay.AddDate(0, 0, 7*k*r.interval)) {
				return out
			}
		default:
			weekStart := firstDay.AddDate(0, 0, -mondayIndex(firstDay.Weekday())+7*k*r.interval)
			for _, wd := range r.byDay {
				day := weekStart.AddDate(0, 0, mondayIndex(wd))
				if day.Before(firstDay) {
					continue
				}
				if !emit(day) {
					return out
				}
			}
		}
	}
}

// wallClock returns the instant a local wall clock names in loc. A wall
// clock that occurs twice (DST fall-back) names its first occurrence and
// one that does not occur (spring-forward) is read with the offset before
// the gap, as RFC 5545 section 3.3.5 says.
func wallClock(y int, m time.Month, d, hh, mm, ss int, loc *time.Location) time.Time {
	t := time.Date(y, m, d, hh, mm, ss, 0, loc)
	for _, back := range []time.Duration{2 * time.Hour, time.Hour, 30 * time.Minute} {
		e := t.Add(-back).In(loc)
		ey, em, ed := e.Date()
		eh, emin, es := e.Clock()
		if ey == y && em == m && ed == d && eh == hh && emin == mm && es == ss {
			return e
		}
	}
	return t
}

// instanceID names an instance as Google does: the series id, an
// underscore and the original start in UTC.
func instanceID(seriesID string, originalStart time.Time) string {
	return seriesID + "_" + originalStart.UTC().Format("20060102T150405Z")
}

// seriesZone returns the zone a series' wall clock is kept in: its start's
// timeZone, else the offset of its start dateTime.
func seriesZone(master *calendar.Event, start time.Time) (*time.Location, error) {
	if master.Start.TimeZone == "" {
		return start.Location(), nil
	}
	loc, err := time.LoadLocation(master.Start.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("start.timeZone: %w", err)
	}
	return loc, nil
}

// seriesRule reads what expanding a recurring event needs: its rule, the
// first instance's start and end, and the zone its wall clock is kept in.
func seriesRule(master *calendar.Event) (r rule, start, end time.Time, loc *time.Location, err error) {
	if r, err = parseRecurrence(master.Recurrence); err != nil {
		return r, start, end, nil, err
	}
	if master.Start == nil || master.Start.DateTime == "" || master.End == nil || master.End.DateTime == "" {
		return r, start, end, nil, errors.New("recurrence: the emulator expands timed series only")
	}
	if start, err = time.Parse(time.RFC3339, master.Start.DateTime); err != nil {
		return r, start, end, nil, fmt.Errorf("start.dateTime: %w", err)
	}
	if end, err = time.Parse(time.RFC3339, master.End.DateTime); err != nil {
		return r, start, end, nil, fmt.Errorf("end.dateTime: %w", err)
	}
	loc, err = seriesZone(master, start)
	return r, start, end, loc, err
}

// checkSeries reports whether the emulator can expand master.
func checkSeries(master *calendar.Event) error {
	_, _, _, _, err := seriesRule(master)
	return err
}

// expand returns the instances of a recurring event whose original start
// is before horizon (zero: as far as Google expands it, see maxInstances),
// shaped as events.list returns them with singleEvents=true.
func expand(master *calendar.Event, horizon time.Time) ([]*calendar.Event, error) {
	r, start, end, loc, err := seriesRule(master)
	if err != nil {
		return nil, err
	}
	var out []*calendar.Event
	for _, t := range r.occurrences(start, loc, horizon) {
		inst := clone(master)
		inst.Id = instanceID(master.Id, t)
		inst.RecurringEventId = master.Id
		inst.Recurrence = nil
		local := t.In(loc).Format(time.RFC3339)
		inst.OriginalStartTime = &calendar.EventDateTime{DateTime: local, TimeZone: master.Start.TimeZone}
		inst.Start = &calendar.EventDateTime{DateTime: local, TimeZone: master.Start.TimeZone}
		inst.End = &calendar.EventDateTime{DateTime: t.Add(end.Sub(start)).In(loc).Format(time.RFC3339), TimeZone: master.End.TimeZone}
		inst.HtmlLink = htmlLink(inst.Id)
		out = append(out, inst)
	}
	return out, nil
}
