package selfservice

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot"
)

// What a channel follows besides reminders (docs/design.md, "Team
// calendars in channels"): "/meetingbot subscribe <calendar> [offsets]
// [changes] [daily HH:MM] [weekly <day> HH:MM]", with "none" as offsets
// for a channel that wants only changes or agendas.

// follow is what a subscribe asked to follow.
type follow struct {
	// none is true for "none" as offsets: no reminders.
	none bool
	// changes asks for each change of the calendar.
	changes bool
	// daily is "HH:MM", weekly "mon 09:00"; "" for none.
	daily, weekly string
}

// any reports whether f asks for anything besides reminders.
func (f follow) any() bool { return f.changes || f.daily != "" || f.weekly != "" }

// weekdays are the days "weekly" takes, by their three letters and whole
// names.
var weekdays = map[string]time.Weekday{
	"mon": time.Monday, "monday": time.Monday, "tue": time.Tuesday, "tuesday": time.Tuesday,
	"wed": time.Wednesday, "wednesday": time.Wednesday, "thu": time.Thursday, "thursday": time.Thursday,
	"fri": time.Friday, "friday": time.Friday, "sat": time.Saturday, "saturday": time.Saturday,
	"sun": time.Sunday, "sunday": time.Sunday,
}

// parseSubscribeArgs reads what follows subscribe's calendar ID: offsets
// (or "none"), "changes", "daily HH:MM" and "weekly <day> HH:MM", in any
// order. offsetsExample is a whole valid command with offsets; the
// mistakes in what to follow are answered with one that follows.
func parseSubscribeArgs(args []string, offsetsExample, cmd, calendar string, lim Limits) ([]time.Duration, bool, follow, error) {
	example := cmd + " subscribe " + calendar + " none changes daily 09:00 weekly mon 09:00"
	var f follow
	var offsets []string
	seen := map[string]bool{}
	once := func(word string) error {
		if seen[word] {
			return usage("`%s` appears twice. For example: `%s`", word, example)
		}
		seen[word] = true
		return nil
	}
	for i := 0; i < len(args); i++ {
		word := strings.ToLower(args[i])
		switch word {
		case "none", "changes", "daily", "weekly":
			if err := once(word); err != nil {
				return nil, false, f, err
			}
		}
		switch word {
		case "none":
			f.none = true
		case "changes":
			f.changes = true
		case "daily":
			if i+1 >= len(args) {
				return nil, false, f, usage("`daily` needs the agenda's time of day, HH:MM on a 24-hour clock. For example: `%s`", example)
			}
			at, ok := parseTimeOfDay(args[i+1])
			if !ok {
				return nil, false, f, usage("`%s` is not a time of day: write the daily agenda's time as HH:MM on a 24-hour clock. For example: `%s`", escape(args[i+1]), example)
			}
			f.daily, i = at, i+1
		case "weekly":
			if i+2 >= len(args) {
				return nil, false, f, usage("`weekly` needs a day and a time, such as `weekly mon 09:00`. For example: `%s`", example)
			}
			day, ok := weekdays[strings.ToLower(args[i+1])]
			if !ok {
				return nil, false, f, usage("`%s` is not a day of the week: write `mon`, `tue` … `sun`. For example: `%s`", escape(args[i+1]), example)
			}
			at, ok := parseTimeOfDay(args[i+2])
			if !ok {
				return nil, false, f, usage("`%s` is not a time of day: write the weekly agenda's time as HH:MM on a 24-hour clock. For example: `%s`", escape(args[i+2]), example)
			}
			f.weekly, i = strings.ToLower(day.String()[:3])+" "+at, i+2
		default:
			offsets = append(offsets, args[i])
		}
	}
	if f.none && len(offsets) > 0 {
		return nil, false, f, usage("`none` means no reminders, so `%s` cannot come with it. For example: `%s`", escape(strings.Join(offsets, " ")), example)
	}
	if f.none && !f.any() {
		return nil, false, f, usage("with `none` there would be nothing to post: add `changes`, `daily 09:00` or `weekly mon 09:00`. For example: `%s`", example)
	}
	offs, onCalendar, err := parseReminding(strings.Join(offsets, " "), offsetsExample, lim)
	return offs, onCalendar, f, err
}

// following is what f asks of a channel subscription made or changed at
// now by someone in zone: changes since now (or since since, when it
// followed them already).
func (f follow) following(now, since time.Time, zone string) meetingbot.Following {
	out := meetingbot.Following{Daily: f.daily, Weekly: f.weekly}
	if f.daily != "" || f.weekly != "" {
		out.Zone = zone
	}
	if f.changes {
		out.ChangesSince = now
		if !since.IsZero() {
			out.ChangesSince = since
		}
	}
	return out
}

// followingText says what a channel subscription posts besides its
// reminders: "each change of the calendar, a daily agenda at 09:00 and a
// weekly one on Mondays at 09:00 (Europe/Berlin)"; "" for nothing.
func followingText(f meetingbot.Following) string {
	var parts []string
	if !f.ChangesSince.IsZero() {
		parts = append(parts, "each change of the calendar (added, moved, cancelled, renamed)")
	}
	if f.Daily != "" {
		parts = append(parts, "a daily agenda at "+f.Daily)
	}
	if day, at, ok := meetingbot.ParseWeekly(f.Weekly); ok {
		parts = append(parts, fmt.Sprintf("a weekly agenda on %ss at %s", day, at))
	}
	if len(parts) == 0 {
		return ""
	}
	text := strings.Join(parts[:len(parts)-1], ", ")
	if text != "" {
		text += " and "
	}
	text += parts[len(parts)-1]
	if f.Daily != "" || f.Weekly != "" {
		text += " (" + cmp.Or(f.Zone, "UTC") + " time)"
	}
	return text
}

// postsText says everything a channel subscription posts: "reminders 10m
// before each meeting, and each change of the calendar".
func postsText(reminded string, f meetingbot.Following) string {
	var parts []string
	if reminded != "" {
		parts = append(parts, "reminders "+reminded)
	}
	if t := followingText(f); t != "" {
		parts = append(parts, t)
	}
	return strings.Join(parts, ", and ")
}

// subscribedText answers a subscribe that made a channel subscription.
func subscribedText(calendar, reminded string, f meetingbot.Following, next, hint string) string {
	if !f.Any() {
		return fmt.Sprintf("Subscribed: I'll post the reminders of %s in this channel, %s. %s\n%s", escape(calendar), reminded, next, hint)
	}
	text := fmt.Sprintf("Subscribed: I'll post in this channel %s of %s.", postsText(reminded, f), escape(calendar))
	if reminded != "" {
		text += " " + next
	}
	return text + "\n" + hint
}

// resubscribe answers a subscribe of a calendar the channel has already:
// with nothing after the calendar it changes nothing; with offsets or
// what to follow, it makes the subscription post just that, for those
// who may change it.
func (a *App) resubscribe(ctx context.Context, cmd slack.SlashCommand, p person, sub meetingbot.SlackSubscription, req request) string {
	if req.offsets == nil && !req.follow.none && !req.follow.any() {
		return alreadySubscribed(sub, a.command)
	}
	if ok, why := a.mayChange(p, sub.CreatedBy, sub.CalendarID); !ok {
		return why
	}
	offsets := req.offsets
	if offsets == nil && !req.follow.none {
		offsets = a.defaults
	}
	f := req.follow.following(a.now(), sub.ChangesSince, p.TZ)
	if _, err := a.store.SetSlackSubscriptionFollowing(ctx, sub.ID, offsets, f); err != nil {
		return a.failed(err, cmd.UserID)
	}
	a.log.Info("subscription changed", "user", cmd.UserID, "subscription", sub.ID)
	return fmt.Sprintf("Changed: I'll post in this channel %s of %s.", postsText(reminding(offsets, sub.OnCalendar, sub.Rules), f), escape(sub.CalendarID))
}

// channelPosts says what a channel subscription posts, as "list" shows
// it: its offsets alone when it follows nothing more.
func channelPosts(s meetingbot.SlackSubscription) string {
	reminded := reminding(s.Offsets, s.OnCalendar, s.Rules)
	if !s.Following.Any() {
		return reminded
	}
	return postsText(reminded, s.Following)
}

// reminding words when a subscription reminds, rules included, for a
// sentence; "" when it sends no reminders.
func reminding(offsets []time.Duration, onCalendar bool, rules meetingbot.Rules) string {
	if len(offsets) == 0 && !onCalendar {
		return ""
	}
	return withRules(remindedText(offsets, onCalendar), rules)
}
