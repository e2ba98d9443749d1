package selfservice

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// verb is a /meetingbot subcommand.
type verb string

// The subcommands of docs/usage.md's table.
const (
	verbHelp        verb = "help"
	verbOn          verb = "on"
	verbOff         verb = "off"
	verbOffsets     verb = "offsets"
	verbAgenda      verb = "agenda"
	verbSubscribe   verb = "subscribe"
	verbUnsubscribe verb = "unsubscribe"
	verbList        verb = "list"
	verbConnect     verb = "connect"
	verbDisconnect  verb = "disconnect"
	verbStatus      verb = "status"
	verbInvites     verb = "invites"
	verbSkip        verb = "skip"
	verbUnskip      verb = "unskip"
	verbHours       verb = "hours"
)

// request is one parsed /meetingbot text.
type request struct {
	verb verb
	// offsets are the offsets given, ascending; nil when none were.
	offsets []time.Duration
	// agenda is "HH:MM" for "agenda HH:MM", "" for "agenda off".
	agenda string
	// calendar is subscribe's and unsubscribe's calendar ID, lower case.
	calendar string
	// follow is what subscribe asks to follow besides reminders.
	follow follow
	// unknown is the word of an unknown subcommand, shown with the help.
	unknown string
	// on is status's and invites' on (true) or off; titles says it is
	// about showing the meetings' titles, ooo about "Out of office"
	// during out-of-office events.
	on, titles, ooo bool
	// onCalendar is true when the offsets of on, offsets or subscribe
	// name "calendar": each meeting's own reminders.
	onCalendar bool
	// rules are the rule words of skip, unskip, hours and subscribe.
	rules []ruleChange
}

// usageError is bad input: a sentence for the person who typed it, saying
// what was wrong, with a valid example.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usage(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// Limits bound the offsets people may choose. Offsets are validated as
// REMINDER_OFFSETS is, and against the sweep: a reminder due less than a
// tick before its meeting could fall between two sweeps.
type Limits struct {
	// Tick is the sweep interval (TICK_INTERVAL). An offset above 0 must
	// be at least Tick; 0 disables this check.
	Tick time.Duration
	// StartGrace is how late after the start a 0 ("when it starts")
	// reminder may still go out (scheduler.StartGrace). 0 is allowed as an
	// offset only when Tick is at most StartGrace.
	StartGrace time.Duration
	// Max is the largest offset; 7 days by default.
	Max time.Duration
	// Count is the most offsets one subscription may have; 10 by default.
	Count int
}

func (l Limits) withDefaults() Limits {
	if l.Max <= 0 {
		l.Max = 7 * 24 * time.Hour
	}
	if l.Count <= 0 {
		l.Count = 10
	}
	return l
}

// parse reads the text after the command. It fails with a *usageError
// that says what was wrong; cmd is how the command is typed ("/meetingbot").
func parse(text, cmd string, lim Limits) (request, error) {
	words := strings.Fields(text)
	if len(words) == 0 {
		return request{verb: verbHelp}, nil
	}
	word, args := strings.ToLower(words[0]), words[1:]
	rest := strings.Join(args, " ")
	switch v := verb(word); v {
	case verbHelp:
		return request{verb: verbHelp}, nil
	case verbStatus:
		switch strings.ToLower(rest) {
		case "on", "off":
			return request{verb: v, on: strings.EqualFold(rest, "on")}, nil
		case "titles", "titles on", "titles off":
			return request{verb: v, titles: true, on: !strings.EqualFold(rest, "titles off")}, nil
		case "ooo", "ooo on", "ooo off":
			return request{verb: v, ooo: true, on: !strings.EqualFold(rest, "ooo off")}, nil
		}
		return request{}, usage("`status` takes `on`, `off`, `titles`, `titles off`, `ooo` or `ooo off`, e.g. `%s status on`.", cmd)
	case verbInvites:
		switch strings.ToLower(rest) {
		case "on", "off":
			return request{verb: v, on: strings.EqualFold(rest, "on")}, nil
		}
		return request{}, usage("`invites` takes `on` or `off`, e.g. `%s invites on`.", cmd)
	case verbOff, verbList, verbConnect, verbDisconnect:
		if len(args) > 0 {
			return request{}, usage("`%s` takes nothing after it, so `%s` is not understood. For example: `%s %s`", v, rest, cmd, v)
		}
		return request{verb: v}, nil
	case verbOn:
		offs, onCal, err := parseReminding(rest, cmd+" on 10m,1m", lim)
		return request{verb: v, offsets: offs, onCalendar: onCal}, err
	case verbOffsets:
		if rest == "" {
			return request{}, usage("`offsets` needs the times before each meeting to remind you at, e.g. `%s offsets 5m,0` (0 is when it starts).", cmd)
		}
		offs, onCal, err := parseReminding(rest, cmd+" offsets 5m,0", lim)
		return request{verb: v, offsets: offs, onCalendar: onCal}, err
	case verbSkip, verbUnskip, verbHours:
		others, changes, err := takeRules(words, cmd)
		if err == nil && len(others) > 0 {
			err = usage("`%s` is not understood after `%s`. For example: `%s %s`", escape(strings.Join(others, " ")), v, cmd, map[verb]string{
				verbSkip: "skip maybe", verbUnskip: "unskip maybe", verbHours: "hours 09:00-18:00 mon-fri"}[v])
		}
		return request{verb: v, rules: changes}, err
	case verbAgenda:
		if len(args) != 1 {
			return request{}, usage("`agenda` takes a time of day or `off`, e.g. `%s agenda 08:30` or `%s agenda off`.", cmd, cmd)
		}
		if strings.EqualFold(args[0], "off") {
			return request{verb: v}, nil
		}
		at, ok := parseTimeOfDay(args[0])
		if !ok {
			return request{}, usage("`%s` is not a time of day: write it as HH:MM on a 24-hour clock, e.g. `%s agenda 08:30`, or `%s agenda off`.", escape(args[0]), cmd, cmd)
		}
		return request{verb: v, agenda: at}, nil
	case verbSubscribe, verbUnsubscribe:
		return parseSubscribe(v, args, cmd, lim)
	default:
		return request{verb: verbHelp, unknown: words[0]}, nil
	}
}

// parseSubscribe reads subscribe's and unsubscribe's words after the
// verb: the calendar ID, then, for subscribe, its rules, offsets (or
// `calendar`, or `none`) and what else the channel follows.
func parseSubscribe(v verb, args []string, cmd string, lim Limits) (request, error) {
	example := cmd + " " + string(v) + " team@example.com"
	if v == verbSubscribe {
		example += " 10m,1m"
	}
	if len(args) == 0 {
		return request{}, usage("`%s` needs a calendar ID, e.g. `%s`.", v, example)
	}
	cal, err := parseCalendar(args[0], example)
	if err != nil {
		return request{}, err
	}
	r := request{verb: v, calendar: cal}
	if len(args) > 1 {
		if v == verbUnsubscribe {
			return request{}, usage("`unsubscribe` takes only the calendar ID, e.g. `%s`.", example)
		}
		var others []string
		if others, r.rules, err = takeRules(args[1:], cmd); err != nil {
			return request{}, err
		}
		r.offsets, r.onCalendar, r.follow, err = parseSubscribeArgs(others, example, cmd, cal, lim)
	}
	return r, err
}

// parseOffsetsArg reads offsets such as "10m,1m,0" (commas or spaces
// between them); "" gives nil. example is a whole valid command.
func parseOffsetsArg(s, example string, lim Limits) ([]time.Duration, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	lim = lim.withDefaults()
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	var out []time.Duration
	for _, part := range parts {
		d, err := time.ParseDuration(part)
		switch {
		case err != nil:
			return nil, usage("`%s` is not a list of offsets: write each as a duration such as 10m, 90s or 1h, separated by commas, with 0 for when the meeting starts. For example: `%s`", escape(s), example)
		case d < 0:
			return nil, usage("`%s` is negative: an offset is how long before the start to remind. For example: `%s`", escape(part), example)
		case d%time.Second != 0:
			return nil, usage("`%s` is not a whole number of seconds. For example: `%s`", escape(part), example)
		case d > lim.Max:
			return nil, usage("`%s` is more than %s before the meeting. For example: `%s`", escape(part), formatOffset(lim.Max), example)
		case slices.Contains(out, d):
			return nil, usage("`%s` appears twice. For example: `%s`", escape(part), example)
		case d > 0 && lim.Tick > 0 && d < lim.Tick:
			return nil, usage("`%s` is too close to the start: I check calendars every %s, so a reminder %s before could be missed. Use %s or more, e.g. `%s`", escape(part), formatOffset(lim.Tick), formatOffset(d), formatOffset(lim.Tick), example)
		case d == 0 && lim.Tick > 0 && lim.Tick > lim.StartGrace:
			return nil, usage("0 (when the meeting starts) could be missed: I check calendars only every %s. Use %s or more, e.g. `%s`", formatOffset(lim.Tick), formatOffset(lim.Tick), example)
		}
		out = append(out, d)
	}
	if len(out) > lim.Count {
		return nil, usage("that is %d offsets; %d is the most. For example: `%s`", len(out), lim.Count, example)
	}
	slices.Sort(out)
	return out, nil
}

// checkOffsets tells whether offsets pass the limits, as typed offsets
// must; it is used on offsets that come from a menu or the defaults.
func checkOffsets(offsets []time.Duration, lim Limits) error {
	if len(offsets) == 0 {
		return usage("no offsets")
	}
	parts := make([]string, len(offsets))
	for i, o := range offsets {
		parts[i] = formatOffset(o)
	}
	_, err := parseOffsetsArg(strings.Join(parts, ","), "10m,1m", lim)
	return err
}

// parseTimeOfDay reads "HH:MM" or "H:MM" on a 24-hour clock.
func parseTimeOfDay(s string) (string, bool) {
	h, m, ok := strings.Cut(s, ":")
	if !ok || len(h) < 1 || len(h) > 2 || len(m) != 2 {
		return "", false
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || hh < 0 || hh > 23 || mm < 0 || mm > 59 || strings.ContainsAny(s, "+-") {
		return "", false
	}
	return fmt.Sprintf("%02d:%02d", hh, mm), true
}

// parseCalendar reads a calendar ID: an email-like ID such as
// alice@example.com or …@group.calendar.google.com. Slack may send an
// email as a <mailto:…|…> link; it is unwrapped.
func parseCalendar(s, example string) (string, error) {
	if strings.HasPrefix(s, "<mailto:") && strings.HasSuffix(s, ">") {
		s = strings.TrimPrefix(strings.TrimSuffix(s, ">"), "<mailto:")
		s, _, _ = strings.Cut(s, "|")
	}
	switch {
	case strings.HasPrefix(s, "<#"):
		return "", usage("that is a channel; give the calendar's ID and run the command in the channel that should get the reminders, e.g. `%s`.", example)
	case strings.HasPrefix(s, "<@"):
		return "", usage("that is a person; give their calendar's ID, usually their email, e.g. `%s`.", example)
	case len(s) > 254 || strings.Count(s, "@") != 1 || strings.HasPrefix(s, "@") || strings.HasSuffix(s, "@") || strings.ContainsAny(s, "<>|,\"'`"):
		return "", usage("`%s` is not a calendar ID: it looks like an email, e.g. alice@example.com or …@group.calendar.google.com (Google Calendar: Settings > the calendar > Integrate calendar). For example: `%s`", escape(s), example)
	}
	return strings.ToLower(s), nil
}

// formatOffset writes an offset compactly: "10m", "90s", "1h", "0".
func formatOffset(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}

// formatOffsets writes offsets largest first, as people write them:
// "10m, 1m, 0".
func formatOffsets(offsets []time.Duration) string {
	sorted := slices.Clone(offsets)
	slices.Sort(sorted)
	slices.Reverse(sorted)
	parts := make([]string, len(sorted))
	for i, o := range sorted {
		parts[i] = formatOffset(o)
	}
	return strings.Join(parts, ", ")
}

// offsetsValue writes offsets as a command argument and menu value:
// "10m,1m,0".
func offsetsValue(offsets []time.Duration) string {
	return strings.ReplaceAll(formatOffsets(offsets), ", ", ",")
}

// escape makes text safe inside Slack mrkdwn: &, < and > are control
// characters there.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
