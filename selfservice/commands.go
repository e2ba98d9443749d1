package selfservice

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/slack-go/slack"
)

// answer answers one /meetingbot command with a sentence for the person
// who typed it. Bad input changes nothing.
func (a *App) answer(ctx context.Context, cmd slack.SlashCommand) string {
	req, err := parse(cmd.Text, a.command, a.limits)
	if err != nil {
		return err.Error()
	}
	a.log.Debug("slash command", "user", cmd.UserID, "channel", cmd.ChannelID, "verb", string(req.verb))
	switch req.verb {
	case verbOn:
		return a.turnOn(ctx, cmd.UserID, choice{req.offsets, req.onCalendar}, "`"+a.command+" on`")
	case verbOff:
		return a.turnOff(ctx, cmd.UserID)
	case verbOffsets:
		return a.setOffsets(ctx, cmd.UserID, choice{req.offsets, req.onCalendar})
	case verbSkip, verbUnskip, verbHours:
		return a.setRules(ctx, cmd.UserID, req.rules)
	case verbAgenda:
		return a.setAgenda(ctx, cmd.UserID, req.agenda)
	case verbSubscribe:
		return a.subscribe(ctx, cmd, req)
	case verbUnsubscribe:
		return a.unsubscribe(ctx, cmd, req.calendar)
	case verbList:
		return a.list(ctx, cmd)
	case verbConnect:
		return a.connectGoogle(ctx, cmd.UserID)
	case verbDisconnect:
		return a.disconnectGoogle(ctx, cmd.UserID)
	case verbStatus:
		if req.titles {
			return a.statusTitles(ctx, cmd.UserID, req.on)
		}
		if req.ooo {
			return a.statusOutOfOffice(ctx, cmd.UserID, req.on)
		}
		if req.on {
			return a.statusOn(ctx, cmd.UserID)
		}
		return a.statusOff(ctx, cmd.UserID)
	case verbInvites:
		if req.on {
			return a.invitesOn(ctx, cmd.UserID)
		}
		return a.invitesOff(ctx, cmd.UserID)
	}
	return a.help(ctx, cmd.UserID, req.unknown)
}

// failed logs err and tells the person it may not have been done.
func (a *App) failed(err error, user string) string {
	a.log.Error("self-service request failed", "user", user, "err", err)
	return "Something went wrong on my side, so this may not have been done. Try again in a minute; if it keeps failing, tell whoever runs the bot."
}

// fromConfig is the answer about a subscription of CALENDARS.
func fromConfig(f Fixed) string {
	return fmt.Sprintf("That comes from the bot's configuration (CALENDARS: `%s`, reminded %s), which can't be changed from Slack: ask whoever runs the bot. Nothing changed.",
		escape(f.CalendarID), eachMeeting(f.Offsets))
}

// choice is when a person asked to be reminded: offsets, and their
// calendar's own reminders. The zero choice keeps what they chose before.
type choice struct {
	offsets    []time.Duration
	onCalendar bool
}

// turnOn turns the caller's DMs on for their own calendar, after reading
// it once; the zero choice keeps theirs (or the default offsets). retry
// says how to try again, e.g. "`/meetingbot on`".
func (a *App) turnOn(ctx context.Context, userID string, want choice, retry string) string {
	offsets := want.offsets
	p, err := a.people.get(ctx, userID)
	if err != nil {
		return lookupFailed(err)
	}
	if p.Email == "" {
		return noEmail
	}
	if f, ok := a.operatorDM(p); ok {
		return fromConfig(f)
	}
	set, _, err := a.store.SlackSettingsOf(ctx, userID)
	if err != nil {
		return a.failed(err, userID)
	}
	chosen := offsets != nil || want.onCalendar
	onCal := want.onCalendar || (!chosen && set.OnCalendar)
	if !chosen {
		offsets = a.keptOffsets(set)
	}
	if h := set.Rules.Hours; h != nil && p.TZ != "" && h.Zone != p.TZ {
		moved := *h // working hours follow the person's Slack time zone
		moved.Zone = p.TZ
		set.Rules.Hours = &moved
	}
	id := SubscriptionID(p.Email, userID)
	muted, err := a.mutedSeries(ctx, id)
	if err != nil {
		return a.failed(err, userID)
	}
	meetings, err := a.upcoming(ctx, userID, p.Email, true, muted, 20)
	if err != nil {
		a.log.Info("calendar not readable", "user", userID, "calendar", p.Email, "err", err)
		return a.unreadable(p.Email, retry, err)
	}
	sub, added, err := a.store.AddSlackSubscription(ctx, meetingbot.SlackSubscription{
		ID: id, Kind: meetingbot.SlackPersonal, CalendarID: p.Email, Destination: userID,
		Offsets: offsets, CreatedBy: userID, CreatedAt: a.now(), OnCalendar: onCal, Rules: set.Rules,
	})
	if err != nil {
		return a.failed(err, userID)
	}
	changed := !added && (!slices.Equal(sorted(sub.Offsets), sorted(offsets)) || sub.OnCalendar != onCal || sub.Rules.JSON() != set.Rules.JSON())
	if changed {
		if _, err := a.store.SetSlackSubscriptionReminding(ctx, id, offsets, onCal, set.Rules); err != nil {
			return a.failed(err, userID)
		}
	}
	// An older personal subscription is one for an email the profile no
	// longer has.
	if old, err := a.personal(ctx, userID); err == nil {
		for _, o := range old {
			if o.ID != id {
				_, _ = a.store.RemoveSlackSubscription(ctx, o.ID)
			}
		}
	}
	set.TZ = p.TZ
	if chosen {
		set.Offsets, set.OnCalendar = offsets, onCal
	}
	set.UpdatedAt = a.now()
	if err := a.store.PutSlackSettings(ctx, set); err != nil {
		return a.failed(err, userID)
	}
	if added {
		a.log.Info("reminders on", "user", userID, "subscription", id)
	}
	status := "On."
	if !added && !changed {
		status = "Already on."
	}
	return fmt.Sprintf("%s %s\nFor the meetings on %s, I DM you %s.", status, a.nextText(meetings, choice{offsets, onCal}, p.TZ), escape(p.Email),
		withRules(remindedText(offsets, onCal), set.Rules))
}

// keptOffsets returns the offsets a person chose before, from set: none
// when they chose their calendar's reminders alone, the default when they
// chose none or offsets the sweep could now miss (chosen under another
// TICK_INTERVAL).
func (a *App) keptOffsets(set meetingbot.SlackSettings) []time.Duration {
	if set.OnCalendar && len(set.Offsets) == 0 {
		return nil
	}
	if offsets := a.offsetsFor(set); checkOffsets(offsets, a.limits) == nil {
		return offsets
	}
	return a.defaults
}

// mutedSeries returns the series muted for a subscription.
func (a *App) mutedSeries(ctx context.Context, id string) ([]string, error) {
	ms, err := a.store.MutedSeriesOf(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Series
	}
	return out, nil
}

// turnOff stops the caller's DMs, keeping their offsets for "on".
func (a *App) turnOff(ctx context.Context, userID string) string {
	subs, err := a.personal(ctx, userID)
	if err != nil {
		return a.failed(err, userID)
	}
	if len(subs) == 0 {
		if f, ok := a.operatorDMOf(ctx, userID); ok {
			return fromConfig(f)
		}
		return fmt.Sprintf("Your reminders are already off; `%s on` turns them on.", a.command)
	}
	set, _, err := a.store.SlackSettingsOf(ctx, userID)
	if err != nil {
		return a.failed(err, userID)
	}
	set.Offsets, set.OnCalendar, set.UpdatedAt = subs[0].Offsets, subs[0].OnCalendar, a.now()
	if err := a.store.PutSlackSettings(ctx, set); err != nil {
		return a.failed(err, userID)
	}
	for _, s := range subs {
		if _, err := a.store.RemoveSlackSubscription(ctx, s.ID); err != nil {
			return a.failed(err, userID)
		}
		a.log.Info("reminders off", "user", userID, "subscription", s.ID)
	}
	return fmt.Sprintf("Off. I won't DM you before your meetings any more; `%s on` turns it back on, %s.", a.command, remindedText(subs[0].Offsets, subs[0].OnCalendar))
}

// setOffsets changes the caller's offsets, on or off.
func (a *App) setOffsets(ctx context.Context, userID string, want choice) string {
	offsets := want.offsets
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
	set.Offsets, set.OnCalendar, set.UpdatedAt = offsets, want.onCalendar, a.now()
	if err := a.store.PutSlackSettings(ctx, set); err != nil {
		return a.failed(err, userID)
	}
	for _, s := range subs {
		if _, err := a.store.SetSlackSubscriptionReminding(ctx, s.ID, offsets, want.onCalendar, s.Rules); err != nil {
			return a.failed(err, userID)
		}
	}
	if len(subs) == 0 {
		return fmt.Sprintf("Saved: %s. Your reminders are off; `%s on` turns them on.", remindedText(offsets, want.onCalendar), a.command)
	}
	return fmt.Sprintf("Done: I DM you %s.", remindedText(offsets, want.onCalendar))
}

// setAgenda sets or clears ("") the caller's daily agenda time.
func (a *App) setAgenda(ctx context.Context, userID, at string) string {
	p, err := a.people.get(ctx, userID)
	if err != nil {
		return lookupFailed(err)
	}
	set, _, err := a.store.SlackSettingsOf(ctx, userID)
	if err != nil {
		return a.failed(err, userID)
	}
	set.Agenda, set.TZ, set.UpdatedAt = at, p.TZ, a.now()
	if err := a.store.PutSlackSettings(ctx, set); err != nil {
		return a.failed(err, userID)
	}
	if at == "" {
		return "No daily agenda."
	}
	return fmt.Sprintf("Daily agenda at %s (%s, your Slack time zone), on each day that has meetings.", at, escape(cmp.Or(p.TZ, "UTC")))
}

// isDM reports whether a slash command came from a direct message.
func isDM(channelID string) bool { return strings.HasPrefix(channelID, "D") }

// subscribe posts a calendar's reminders in the command's channel.
func (a *App) subscribe(ctx context.Context, cmd slack.SlashCommand, req request) string {
	if isDM(cmd.ChannelID) {
		return fmt.Sprintf("Run `subscribe` in the channel that should get the reminders. For DMs about your own meetings, use `%s on`. Nothing changed.", a.command)
	}
	p, err := a.people.get(ctx, cmd.UserID)
	if err != nil {
		return lookupFailed(err)
	}
	if ok, why := a.mayPost(p, req.calendar); !ok {
		a.log.Info("subscribe refused", "user", cmd.UserID, "channel", cmd.ChannelID, "calendar", req.calendar)
		return why
	}
	for _, f := range a.operatorIn(cmd.ChannelID, cmd.ChannelName) {
		if strings.EqualFold(f.CalendarID, req.calendar) {
			return "Already posted here: " + fromConfig(f)
		}
	}
	id := SubscriptionID(req.calendar, cmd.ChannelID)
	if sub, ok, err := a.store.SlackSubscription(ctx, id); err != nil {
		return a.failed(err, cmd.UserID)
	} else if ok && (len(req.rules) > 0 || req.onCalendar) {
		return a.changeChannel(ctx, sub, p, req)
	} else if ok {
		return a.resubscribe(ctx, cmd, p, sub, req)
	}
	offsets := req.offsets
	if offsets == nil && !req.follow.none && !req.onCalendar {
		offsets = a.defaults
	}
	var rules meetingbot.Rules
	for _, c := range req.rules {
		rules = c.apply(rules, p.TZ)
	}
	muted, err := a.mutedSeries(ctx, id)
	if err != nil {
		return a.failed(err, cmd.UserID)
	}
	meetings, err := a.upcoming(ctx, cmd.UserID, req.calendar, true, muted, 20)
	if err != nil {
		a.log.Info("calendar not readable", "user", cmd.UserID, "calendar", req.calendar, "err", err)
		return a.unreadable(req.calendar, "`"+a.command+" subscribe "+escape(req.calendar)+"`", err)
	}
	following := req.follow.following(a.now(), time.Time{}, p.TZ)
	sub, added, err := a.store.AddSlackSubscription(ctx, meetingbot.SlackSubscription{
		ID: id, Kind: meetingbot.SlackChannel, CalendarID: req.calendar, Destination: cmd.ChannelID,
		Offsets: offsets, CreatedBy: cmd.UserID, CreatedAt: a.now(), Following: following, OnCalendar: req.onCalendar, Rules: rules,
	})
	if err != nil {
		return a.failed(err, cmd.UserID)
	}
	if !added {
		return alreadySubscribed(sub, a.command)
	}
	a.log.Info("subscribed", "user", cmd.UserID, "subscription", id)
	return subscribedText(req.calendar, reminding(offsets, req.onCalendar, rules), following, a.nextText(meetings, choice{offsets, req.onCalendar}, p.TZ), a.inviteHint())
}

func alreadySubscribed(sub meetingbot.SlackSubscription, command string) string {
	posts := channelPosts(sub)
	if sub.Following.Any() {
		posts = "with " + posts
	}
	return fmt.Sprintf("Already subscribed: %s is posted here %s (set up by <@%s>). Nothing changed; to change it, subscribe again saying what to post, e.g. `%s subscribe %s 10m changes daily 09:00`; `%s subscribe %s skip alone` (or `unskip`, `hours`) changes its rules.",
		escape(sub.CalendarID), posts, sub.CreatedBy, command, escape(sub.CalendarID), command, escape(sub.CalendarID))
}

// inviteHint reminds that the bot posts only where it is a member.
func (a *App) inviteHint() string {
	if a.botUser == "" {
		return "If I'm not a member of this channel yet, invite me with /invite."
	}
	return fmt.Sprintf("If I'm not a member of this channel yet, invite me with /invite <@%s>.", a.botUser)
}

// unsubscribe stops posting a calendar in the command's channel.
func (a *App) unsubscribe(ctx context.Context, cmd slack.SlashCommand, calendar string) string {
	sub, ok, err := a.store.SlackSubscription(ctx, SubscriptionID(calendar, cmd.ChannelID))
	if err != nil {
		return a.failed(err, cmd.UserID)
	}
	if !ok {
		for _, f := range a.operatorIn(cmd.ChannelID, cmd.ChannelName) {
			if strings.EqualFold(f.CalendarID, calendar) {
				return fromConfig(f)
			}
		}
		return fmt.Sprintf("I don't post %s here, so nothing changed. `%s list` shows what I post here.", escape(calendar), a.command)
	}
	p, err := a.people.get(ctx, cmd.UserID)
	if err != nil {
		return lookupFailed(err)
	}
	if ok, why := a.mayChange(p, sub.CreatedBy, sub.CalendarID); !ok {
		return why
	}
	if _, err := a.store.RemoveSlackSubscription(ctx, sub.ID); err != nil {
		return a.failed(err, cmd.UserID)
	}
	a.log.Info("unsubscribed", "user", cmd.UserID, "subscription", sub.ID)
	return fmt.Sprintf("Unsubscribed: I stopped posting the reminders of %s here.", escape(calendar))
}

// maxListed bounds the lines of "list", to keep a reply small.
const maxListed = 30

// list shows the channel's subscriptions and the caller's.
func (a *App) list(ctx context.Context, cmd slack.SlashCommand) string {
	var b strings.Builder
	if !isDM(cmd.ChannelID) {
		subs, err := a.store.SlackSubscriptionsTo(ctx, cmd.ChannelID)
		if err != nil {
			return a.failed(err, cmd.UserID)
		}
		var lines []string
		for _, f := range a.operatorIn(cmd.ChannelID, cmd.ChannelName) {
			lines = append(lines, fmt.Sprintf("• %s, %s (the bot's configuration)", escape(f.CalendarID), eachMeeting(f.Offsets)))
		}
		for _, s := range subs {
			lines = append(lines, fmt.Sprintf("• %s, %s (set up by <@%s>)", escape(s.CalendarID), channelPosts(s), s.CreatedBy))
		}
		if len(lines) == 0 {
			b.WriteString("*In this channel:* nothing yet.\n")
		} else {
			if len(lines) > maxListed {
				lines = append(lines[:maxListed], fmt.Sprintf("…and %d more", len(lines)-maxListed))
			}
			b.WriteString("*In this channel:*\n" + strings.Join(lines, "\n") + "\n")
		}
	}
	b.WriteString(a.settingsText(ctx, cmd.UserID))
	return b.String()
}

// settingsText says how the caller's reminders and agenda are set.
func (a *App) settingsText(ctx context.Context, userID string) string {
	subs, err := a.personal(ctx, userID)
	if err != nil {
		return a.failed(err, userID)
	}
	set, _, err := a.store.SlackSettingsOf(ctx, userID)
	if err != nil {
		return a.failed(err, userID)
	}
	var mine string
	switch {
	case len(subs) > 0:
		mine = fmt.Sprintf("*Your DMs:* on for %s, %s.", escape(subs[0].CalendarID), withRules(remindedText(subs[0].Offsets, subs[0].OnCalendar), subs[0].Rules))
	default:
		mine = fmt.Sprintf("*Your DMs:* off (`%s on` turns them on, %s).", a.command, withRules(a.choiceText(set), set.Rules))
		if f, ok := a.operatorDMOf(ctx, userID); ok {
			mine = fmt.Sprintf("*Your DMs:* on for %s, %s (the bot's configuration).", escape(f.CalendarID), eachMeeting(f.Offsets))
		}
	}
	agenda := "*Daily agenda:* none."
	if set.Agenda != "" {
		agenda = fmt.Sprintf("*Daily agenda:* %s (%s).", set.Agenda, escape(cmp.Or(set.TZ, "UTC")))
	}
	return mine + "\n" + agenda
}

// help says what the bot does and how the caller's settings are.
func (a *App) help(ctx context.Context, userID, unknown string) string {
	c := a.command
	var b strings.Builder
	if unknown != "" {
		fmt.Fprintf(&b, "I don't know `%s`. ", escape(unknown))
	}
	fmt.Fprintf(&b, "I remind people of their Google Calendar meetings in Slack.\n"+
		"• `%[1]s on [offsets]`: DM me before the meetings on my calendar, e.g. `%[1]s on 10m,1m`\n"+
		"• `%[1]s off`: stop my DMs\n"+
		"• `%[1]s offsets 5m,0`: change when I'm reminded (0 is when it starts)\n"+
		"• `%[1]s agenda 08:30` or `%[1]s agenda off`: a DM listing the day's meetings, in my Slack time zone\n"+
		"• `%[1]s on calendar` or `%[1]s on calendar,5m`: remind me at each meeting's own reminders in Google Calendar, plus any offsets listed\n"+
		"• `%[1]s skip unanswered|maybe|alone|nolink` and `%[1]s unskip …`: no reminder for invitations I have not answered, answered maybe, with no other attendee, or with no video link\n"+
		"• `%[1]s hours 09:00-18:00 mon-fri` or `%[1]s hours off`: outside my working hours (my Slack time zone), only meetings I accepted remind me\n"+
		"• `%[1]s subscribe <calendar> [offsets]`: post that calendar's reminders in this channel; add `changes` for each event added, moved, cancelled or renamed, `daily 09:00` or `weekly mon 09:00` for its agenda, and `none` as offsets for no reminders; the same words as for me (`calendar`, `skip …`, `hours …`) follow it\n"+
		"• `%[1]s unsubscribe <calendar>`: stop posting it here\n"+
		"• `%[1]s list`: this channel's subscriptions and mine\n", c)
	if a.googleEnabled() {
		fmt.Fprintf(&b, "• `%[1]s connect` / `%[1]s disconnect`: let me read my calendar with my own Google account, or stop\n", c)
	}
	if a.statusEnabled() {
		fmt.Fprintf(&b, "• `%[1]s status on` / `%[1]s status off`: set my Slack status while I'm in a meeting, or stop; `%[1]s status titles` shows the meeting's title (never a private one's); `%[1]s status ooo` says \"Out of office\" during my out-of-office events\n", c)
	}
	if a.invitesEnabled() {
		fmt.Fprintf(&b, "• `%[1]s invites on` / `%[1]s invites off`: DM me each new invitation, with Going / Maybe / No\n", c)
	}
	b.WriteString(a.settingsText(ctx, userID))
	return b.String()
}
