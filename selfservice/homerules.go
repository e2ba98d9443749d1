package selfservice

import (
	"context"
	"fmt"
	"slices"

	"github.com/meetingbot/meetingbot"
	"github.com/slack-go/slack"
)

// Action IDs of the Home tab's rules.
const (
	actionRules    = "home_rules"
	actionHoursOff = "home_hours_off"
)

// ruleChoices are the Home tab's checkboxes: the calendar's own reminders
// and each skip rule, by the value a checked box sends.
var ruleChoices = []struct{ value, label string }{
	{calendarWord, "Also at each meeting's own reminders in Google Calendar"},
	{string(meetingbot.SkipUnanswered), "Skip invitations I have not answered"},
	{string(meetingbot.SkipMaybe), "Skip invitations I answered maybe"},
	{string(meetingbot.SkipAlone), "Skip events with no other attendee"},
	{string(meetingbot.SkipNoLink), "Skip meetings without a video link"},
}

// rulesBlocks show the caller's calendar reminders and rules, each a
// checkbox, and their working hours (set by command, turned off here).
func (a *App) rulesBlocks(onCal bool, rules meetingbot.Rules) []slack.Block {
	var opts, checked []*slack.OptionBlockObject
	for _, c := range ruleChoices {
		o := slack.NewOptionBlockObject(c.value, plain(c.label), nil)
		opts = append(opts, o)
		if (c.value == calendarWord && onCal) || rules.Has(meetingbot.Skip(c.value)) {
			checked = append(checked, o)
		}
	}
	boxes := slack.NewCheckboxGroupsBlockElement(actionRules, opts...)
	boxes.InitialOptions = checked
	hours := fmt.Sprintf("*Working hours:* none: every meeting reminds at any hour. `%s hours 09:00-18:00 mon-fri` sets them (your Slack time zone); outside them only meetings you accepted remind you.", a.command)
	var off slack.BlockElement
	if rules.Hours != nil {
		hours = fmt.Sprintf("*Working hours:* %s; outside them only meetings you accepted remind you.", escape(rules.Hours.String()))
		off = button(actionHoursOff, "off", "Any hour", "")
	}
	return []slack.Block{
		section("*Which meetings, and when:* "+remindedTextShort(onCal)+", "+rulesText(rules)+".", nil),
		slack.NewActionBlock("rules", boxes),
		section(hours, off),
	}
}

// remindedTextShort is the start of the rules' sentence.
func remindedTextShort(onCal bool) string {
	if onCal {
		return "your offsets and each meeting's own reminders"
	}
	return "your offsets"
}

// checkRules sets the caller's calendar reminders and skip rules to the
// checkboxes checked (values, as Slack sends selected_options: all of
// them, checked before or now), on or off.
func (a *App) checkRules(ctx context.Context, userID string, values []string) string {
	set, _, err := a.store.SlackSettingsOf(ctx, userID)
	if err != nil {
		return a.failed(err, userID)
	}
	subs, err := a.personal(ctx, userID)
	if err != nil {
		return a.failed(err, userID)
	}
	onCal, offsets := set.OnCalendar, set.Offsets
	if len(subs) > 0 {
		onCal, offsets = subs[0].OnCalendar, subs[0].Offsets
	}
	var changes []ruleChange
	for _, k := range meetingbot.Skips {
		if on := slices.Contains(values, string(k)); on != set.Rules.Has(k) {
			changes = append(changes, ruleChange{skip: k, on: on})
		}
	}
	notice := ""
	if wantCal := slices.Contains(values, calendarWord); wantCal != onCal {
		if !wantCal && len(offsets) == 0 {
			offsets = a.defaults // the calendar's reminders alone, turned off: the default offsets
		}
		notice = a.setOffsets(ctx, userID, choice{offsets, wantCal})
	}
	if len(changes) > 0 {
		notice = a.setRules(ctx, userID, changes)
	}
	if notice == "" {
		notice = "Nothing changed."
	}
	return notice
}

// homeRulesAction handles the rules' controls; ok is false for another
// action.
func (a *App) homeRulesAction(ctx context.Context, userID string, act *slack.BlockAction) (notice string, ok bool) {
	switch act.ActionID {
	case actionRules:
		values := make([]string, 0, len(act.SelectedOptions))
		for _, o := range act.SelectedOptions {
			values = append(values, o.Value)
		}
		return a.checkRules(ctx, userID, values), true
	case actionHoursOff:
		return a.setRules(ctx, userID, []ruleChange{{hours: "off"}}), true
	}
	return "", false
}
