package meetingbot

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// CalendarReach is the longest popup reminder a subscription that reminds
// "as my calendar says" (Subscription.OnCalendar) follows: it reads that
// far ahead on every sweep, which the mirror's week-long window answers
// from its store. Google allows popups up to four weeks before an event
// (Events resource, reminders.overrides[].minutes: "between 0 and 40320");
// one set further ahead than a week is not reminded.
const CalendarReach = 7 * 24 * time.Hour

// Rules say which meetings a subscription reminds of, beyond what no
// subscription is reminded of (cancelled, declined, all-day …). The zero
// value reminds of every meeting, as subscriptions always did. The rules
// are the calendar owner's: their answer, their attendees, their hours.
type Rules struct {
	// SkipUnanswered: no reminder of an invitation not answered yet.
	SkipUnanswered bool `json:"unanswered,omitempty"`
	// SkipMaybe: no reminder of an invitation answered "maybe".
	SkipMaybe bool `json:"maybe,omitempty"`
	// SkipAlone: no reminder of an event with no attendee but the
	// calendar's owner (a block of focus time, a reminder to oneself).
	SkipAlone bool `json:"alone,omitempty"`
	// SkipNoLink: no reminder of a meeting without a video link.
	SkipNoLink bool `json:"nolink,omitempty"`
	// Hours, when set, are working hours: a meeting that starts outside
	// them reminds only when the calendar's owner accepted or organizes
	// it.
	Hours *Hours `json:"hours,omitempty"`
}

// Skip is one of the rules that skip meetings, as people name it in
// "/meetingbot skip …".
type Skip string

// The skip rules.
const (
	SkipUnanswered Skip = "unanswered"
	SkipMaybe      Skip = "maybe"
	SkipAlone      Skip = "alone"
	SkipNoLink     Skip = "nolink"
)

// Skips lists every skip rule, in the order they are shown.
var Skips = []Skip{SkipUnanswered, SkipMaybe, SkipAlone, SkipNoLink}

// field returns the flag of r that k names, nil for an unknown name.
func (r *Rules) field(k Skip) *bool {
	switch k {
	case SkipUnanswered:
		return &r.SkipUnanswered
	case SkipMaybe:
		return &r.SkipMaybe
	case SkipAlone:
		return &r.SkipAlone
	case SkipNoLink:
		return &r.SkipNoLink
	}
	return nil
}

// Has reports whether the skip rule k is on.
func (r Rules) Has(k Skip) bool {
	f := r.field(k)
	return f != nil && *f
}

// With returns r with the skip rule k on or off; an unknown k changes
// nothing.
func (r Rules) With(k Skip, on bool) Rules {
	if f := r.field(k); f != nil {
		*f = on
	}
	return r
}

// Zero reports whether r reminds of every meeting.
func (r Rules) Zero() bool { return r == Rules{} }

// Skipped says why r gives m no reminder ("unanswered", "maybe", "alone",
// "nolink" or "hours"), or "" when it reminds of m.
func (r Rules) Skipped(m Meeting) string {
	switch {
	case r.SkipUnanswered && m.Response == ResponseNeedsAction:
		return string(SkipUnanswered)
	case r.SkipMaybe && m.Response == ResponseTentative:
		return string(SkipMaybe)
	case r.SkipAlone && m.Alone():
		return string(SkipAlone)
	case r.SkipNoLink && m.JoinURL == "":
		return string(SkipNoLink)
	case r.Hours != nil && !r.Hours.Within(m.Start) && m.Response != ResponseAccepted && m.Response != ResponseNone:
		// Accepted meetings still remind: quiet hours that silenced them
		// were reverted elsewhere (sectapunterx/heap#144). ResponseNone is
		// the owner's own event, which they organize.
		return "hours"
	}
	return ""
}

// Hours are working hours: From to To (minutes after local midnight,
// From < To) on Days, in Zone (an IANA name, the person's Slack time zone;
// UTC when empty or unknown).
type Hours struct {
	From int            `json:"from"`
	To   int            `json:"to"`
	Days []time.Weekday `json:"days"`
	Zone string         `json:"zone,omitempty"`
}

// Within reports whether the instant t falls in h, in h's zone.
func (h Hours) Within(t time.Time) bool {
	loc, err := time.LoadLocation(h.Zone)
	if err != nil {
		loc = time.UTC
	}
	t = t.In(loc)
	minute := t.Hour()*60 + t.Minute()
	return slices.Contains(h.Days, t.Weekday()) && minute >= h.From && minute < h.To
}

// weekdays are the days' names as people write them, Sunday first as
// time.Weekday counts.
var weekdays = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// ParseHours reads working hours as people type them: "09:00-18:00
// mon-fri", "8:30-17:00 mon,tue,thu" (days "mon-fri" when left out), in
// zone. Its error is a sentence naming what was wrong.
func ParseHours(s, zone string) (Hours, error) {
	words := strings.Fields(strings.ToLower(s))
	if len(words) == 0 || len(words) > 2 {
		return Hours{}, fmt.Errorf("working hours are a time range and days, e.g. 09:00-18:00 mon-fri")
	}
	a, b, ok := strings.Cut(words[0], "-")
	from, okA := minuteOfDay(a)
	to, okB := minuteOfDay(b)
	if !ok || !okA || !okB {
		return Hours{}, fmt.Errorf("%q is not a time range: write it as HH:MM-HH:MM on a 24-hour clock, e.g. 09:00-18:00", words[0])
	}
	if to <= from {
		return Hours{}, fmt.Errorf("%q ends before it starts: working hours run within one day, e.g. 09:00-18:00", words[0])
	}
	days := "mon-fri"
	if len(words) == 2 {
		days = words[1]
	}
	ds, err := parseDays(days)
	if err != nil {
		return Hours{}, err
	}
	return Hours{From: from, To: to, Days: ds, Zone: zone}, nil
}

// parseDays reads "mon-fri", "mon,wed,fri" or "sat-sun", ascending from
// Monday.
func parseDays(s string) ([]time.Weekday, error) {
	var out []time.Weekday
	for _, part := range strings.Split(s, ",") {
		a, b, isRange := strings.Cut(part, "-")
		i, j := slices.Index(weekdays, a), slices.Index(weekdays, b)
		if !isRange {
			j = i
		}
		if i < 0 || j < 0 {
			return nil, fmt.Errorf("%q is not a list of days: write them as mon-fri or mon,tue,thu", s)
		}
		for d := i; ; d = (d + 1) % 7 {
			if !slices.Contains(out, time.Weekday(d)) {
				out = append(out, time.Weekday(d))
			}
			if d == j {
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b time.Weekday) int { return mondayFirst(a) - mondayFirst(b) })
	return out, nil
}

// mondayFirst numbers the days of the week from Monday, as working weeks
// are written.
func mondayFirst(d time.Weekday) int { return (int(d) + 6) % 7 }

// minuteOfDay reads "HH:MM" or "H:MM" as minutes after midnight; "24:00"
// is the end of the day.
func minuteOfDay(s string) (int, bool) {
	h, m, ok := strings.Cut(s, ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || len(h) < 1 || len(h) > 2 || len(m) != 2 || err1 != nil || err2 != nil || hh < 0 || mm < 0 || mm > 59 || hh > 24 || (hh == 24 && mm != 0) {
		return 0, false
	}
	return hh*60 + mm, true
}

// String writes h as ParseHours reads it, and its zone: "09:00-18:00
// mon-fri (Europe/Paris)".
func (h Hours) String() string {
	s := fmt.Sprintf("%02d:%02d-%02d:%02d %s", h.From/60, h.From%60, h.To/60, h.To%60, formatDays(h.Days))
	if h.Zone != "" {
		s += " (" + h.Zone + ")"
	}
	return s
}

// formatDays writes days compactly: "mon-fri", "mon,wed", "sat-sun".
func formatDays(days []time.Weekday) string {
	var parts []string
	for i := 0; i < len(days); {
		j := i
		for j+1 < len(days) && mondayFirst(days[j+1]) == mondayFirst(days[j])+1 {
			j++
		}
		switch {
		case j-i >= 2:
			parts = append(parts, weekdays[days[i]]+"-"+weekdays[days[j]])
		case j > i:
			parts = append(parts, weekdays[days[i]], weekdays[days[j]])
		default:
			parts = append(parts, weekdays[days[i]])
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// String writes r for people: "skip unanswered, alone; hours 09:00-18:00
// mon-fri (Europe/Paris)", or "every meeting".
func (r Rules) String() string {
	var skips []string
	for _, k := range Skips {
		if r.Has(k) {
			skips = append(skips, string(k))
		}
	}
	var parts []string
	if len(skips) > 0 {
		parts = append(parts, "skip "+strings.Join(skips, ", "))
	}
	if r.Hours != nil {
		parts = append(parts, "hours "+r.Hours.String())
	}
	if len(parts) == 0 {
		return "every meeting"
	}
	return strings.Join(parts, "; ")
}

// JSON returns r as the stores keep it: "" for the zero value, else its
// JSON.
func (r Rules) JSON() string {
	if r.Zero() {
		return ""
	}
	b, err := json.Marshal(r)
	if err != nil {
		return "" // a struct of bools, ints and strings always marshals
	}
	return string(b)
}

// ParseRulesJSON reads rules as JSON returns them.
func ParseRulesJSON(s string) (Rules, error) {
	var r Rules
	if s == "" {
		return r, nil
	}
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return Rules{}, fmt.Errorf("stored rules %q: %w", s, err)
	}
	return r, nil
}
