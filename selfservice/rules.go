package selfservice

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/meetingbot/meetingbot"
)

// calendarWord, among offsets ("on calendar,5m"), asks for each meeting's
// own popup reminders in Google Calendar.
const calendarWord = "calendar"

// ruleChange is one rule word of a command: "skip alone", "unskip maybe",
// "hours 09:00-18:00 mon-fri", "hours off".
type ruleChange struct {
	skip  meetingbot.Skip // a skip rule turned on or off
	on    bool
	hours string // "off", or working hours as ParseHours reads them
}

// apply returns r changed by c; zone is the person's Slack time zone, in
// which working hours are.
func (c ruleChange) apply(r meetingbot.Rules, zone string) meetingbot.Rules {
	switch {
	case c.skip != "":
		return r.With(c.skip, c.on)
	case c.hours == "off":
		r.Hours = nil
	case c.hours != "":
		if h, err := meetingbot.ParseHours(c.hours, zone); err == nil { // checked when parsed
			r.Hours = &h
		}
	}
	return r
}

// parseSkip reads the rule a skip or unskip names.
func parseSkip(word, verb, cmd string) (meetingbot.Skip, error) {
	k := meetingbot.Skip(strings.ToLower(word))
	if !slices.Contains(meetingbot.Skips, k) {
		return "", usage("`%s` takes `unanswered` (invitations I have not answered), `maybe`, `alone` (no other attendee) or `nolink` (no video link), e.g. `%s %s maybe`.", verb, cmd, verb)
	}
	return k, nil
}

// parseHoursWords reads the words after "hours": "off", or a time range
// and, optionally, days. It returns the change and how many words it read.
func parseHoursWords(words []string, cmd string) (ruleChange, int, error) {
	example := cmd + " hours 09:00-18:00 mon-fri"
	if len(words) == 0 {
		return ruleChange{}, 0, usage("`hours` needs your working hours or `off`, e.g. `%s` or `%s hours off`.", example, cmd)
	}
	if strings.EqualFold(words[0], "off") {
		return ruleChange{hours: "off"}, 1, nil
	}
	n := 1
	if len(words) > 1 {
		if _, err := meetingbot.ParseHours(words[0]+" "+words[1], ""); err == nil {
			n = 2
		}
	}
	spec := strings.Join(words[:n], " ")
	if _, err := meetingbot.ParseHours(spec, ""); err != nil {
		return ruleChange{}, 0, usage("%s. For example: `%s`", escape(err.Error()), example)
	}
	return ruleChange{hours: spec}, n, nil
}

// takeRules reads the rule words among args (skip, unskip, hours and
// what follows them) and returns the other words, in order.
func takeRules(args []string, cmd string) (rest []string, changes []ruleChange, err error) {
	for i := 0; i < len(args); i++ {
		switch w := strings.ToLower(args[i]); w {
		case "skip", "unskip":
			if i+1 >= len(args) {
				_, err := parseSkip("", w, cmd)
				return nil, nil, err
			}
			k, err := parseSkip(args[i+1], w, cmd)
			if err != nil {
				return nil, nil, err
			}
			changes = append(changes, ruleChange{skip: k, on: w == "skip"})
			i++
		case "hours":
			c, n, err := parseHoursWords(args[i+1:], cmd)
			if err != nil {
				return nil, nil, err
			}
			changes = append(changes, c)
			i += n
		default:
			rest = append(rest, args[i])
		}
	}
	return rest, changes, nil
}

// parseReminding reads offsets that may name the calendar's own
// reminders: "calendar", "calendar,5m", "10m,1m". onCalendar says whether
// "calendar" was among them; offsets are the others.
func parseReminding(s, example string, lim Limits) (offsets []time.Duration, onCalendar bool, err error) {
	if !strings.Contains(strings.ToLower(s), calendarWord) {
		offsets, err = parseOffsetsArg(s, example, lim)
		return offsets, false, err
	}
	var rest []string
	for part := range strings.FieldsFuncSeq(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if strings.EqualFold(part, calendarWord) {
			onCalendar = true
			continue
		}
		rest = append(rest, part)
	}
	offsets, err = parseOffsetsArg(strings.Join(rest, ","), example, lim)
	return offsets, onCalendar, err
}

// remindedText words how a subscription reminds, for a sentence: "10m
// before each meeting", "at each meeting's own reminders in Google
// Calendar and 5m before it".
func remindedText(offsets []time.Duration, onCalendar bool) string {
	own := "at each meeting's own reminders in Google Calendar"
	switch {
	case !onCalendar:
		return eachMeeting(offsets)
	case len(offsets) == 0:
		return own
	}
	return own + " and " + strings.Replace(eachMeeting(offsets), "each meeting", "it", 1)
}

// withRules follows a sentence's words of when with r's, when r has
// any: "10m before each meeting, except those answered maybe".
func withRules(when string, r meetingbot.Rules) string {
	if r.Zero() {
		return when
	}
	return when + ", " + rulesText(r)
}

// rulesText words rules for a sentence: "for every meeting", "except
// invitations you have not answered; outside 09:00-18:00 mon-fri
// (Europe/Paris), only meetings you accepted".
func rulesText(r meetingbot.Rules) string {
	if r.Zero() {
		return "for every meeting"
	}
	words := map[meetingbot.Skip]string{
		meetingbot.SkipUnanswered: "invitations not answered",
		meetingbot.SkipMaybe:      "those answered maybe",
		meetingbot.SkipAlone:      "those with no other attendee",
		meetingbot.SkipNoLink:     "those without a video link",
	}
	var skips []string
	for _, k := range meetingbot.Skips {
		if r.Has(k) {
			skips = append(skips, words[k])
		}
	}
	var parts []string
	if len(skips) > 0 {
		parts = append(parts, "except "+strings.Join(skips, ", "))
	}
	if r.Hours != nil {
		parts = append(parts, "outside "+escape(r.Hours.String())+" only meetings accepted")
	}
	return strings.Join(parts, "; ")
}

// setRules changes the caller's rules, kept in their settings and given
// to their reminders, on or off.
func (a *App) setRules(ctx context.Context, userID string, changes []ruleChange) string {
	p, err := a.people.get(ctx, userID)
	if err != nil {
		return lookupFailed(err)
	}
	subs, err := a.personal(ctx, userID)
	if err != nil {
		return a.failed(err, userID)
	}
	if len(subs) == 0 {
		if f, ok := a.operatorDMOf(ctx, userID); ok {
			return fromConfig(f)
		}
	}
	set, _, err := a.store.SlackSettingsOf(ctx, userID)
	if err != nil {
		return a.failed(err, userID)
	}
	for _, c := range changes {
		set.Rules = c.apply(set.Rules, p.TZ)
	}
	set.TZ, set.UpdatedAt = p.TZ, a.now()
	if err := a.store.PutSlackSettings(ctx, set); err != nil {
		return a.failed(err, userID)
	}
	for _, s := range subs {
		if _, err := a.store.SetSlackSubscriptionReminding(ctx, s.ID, s.Offsets, s.OnCalendar, set.Rules); err != nil {
			return a.failed(err, userID)
		}
	}
	a.log.Info("rules set", "user", userID, "rules", set.Rules.String())
	if len(subs) == 0 {
		return fmt.Sprintf("Saved: reminders %s. Your reminders are off; `%s on` turns them on.", rulesText(set.Rules), a.command)
	}
	return fmt.Sprintf("Done: I DM you %s.", rulesText(set.Rules))
}

// changeChannel applies the rule words and offsets of a subscribe to a
// channel's subscription that exists, for one who may change it.
func (a *App) changeChannel(ctx context.Context, sub meetingbot.SlackSubscription, p person, req request) string {
	if ok, why := a.mayChange(p, sub.CreatedBy, sub.CalendarID); !ok {
		return why
	}
	offsets, onCal := sub.Offsets, sub.OnCalendar
	if req.offsets != nil || req.onCalendar {
		offsets, onCal = req.offsets, req.onCalendar
	}
	rules := sub.Rules
	for _, c := range req.rules {
		rules = c.apply(rules, p.TZ)
	}
	if _, err := a.store.SetSlackSubscriptionReminding(ctx, sub.ID, offsets, onCal, rules); err != nil {
		return a.failed(err, p.ID)
	}
	a.log.Info("subscription changed", "user", p.ID, "subscription", sub.ID, "rules", rules.String())
	return fmt.Sprintf("Done: I post the reminders of %s here %s.", escape(sub.CalendarID), withRules(remindedText(offsets, onCal), rules))
}

// choiceText words set's choice of offsets for a person whose reminders
// are off: theirs (the calendar's own reminders, offsets) or the default.
func (a *App) choiceText(set meetingbot.SlackSettings) string {
	if set.OnCalendar {
		return remindedText(set.Offsets, true)
	}
	return eachMeeting(a.offsetsFor(set))
}
