package selfservice

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify/action"
	"github.com/slack-go/slack"
)

// Action IDs of the Home tab's controls.
const (
	actionOn        = "home_on"
	actionOff       = "home_off"
	actionOffsets   = "home_offsets"
	actionAgenda    = "home_agenda"
	actionAgendaOff = "home_agenda_off"
	actionRefresh   = "home_refresh"
	actionUnmute    = "unmute_series"
)

// offsetChoices are the offsets the Home tab offers; those the sweep could
// miss are left out.
var offsetChoices = [][]time.Duration{
	{10 * time.Minute, time.Minute},
	{10 * time.Minute},
	{5 * time.Minute, 0},
	{15 * time.Minute, 5 * time.Minute},
	{30 * time.Minute, 10 * time.Minute},
	{time.Hour, 10 * time.Minute},
	{5 * time.Minute},
	{time.Minute},
	{0},
}

// Blocks the Home tab shows at most, within Slack's 100.
const (
	maxHomeReminders = 5
	maxHomeMuted     = 30
)

// publishHome publishes the caller's Home tab; notice, if any, heads it:
// the outcome of what they just did.
func (a *App) publishHome(ctx context.Context, userID, notice string) {
	a.publishHomeRead(ctx, userID, notice, false)
}

// publishHomeRead is publishHome, reading the caller's calendar afresh
// (within their reads) when check: "Check again". A person's Home tab is
// read and published under their lock: Slack shows the last view
// published, so two publishes in flight (a click on a reminder's button,
// then Cancel on the Home tab) must not land in the other order, the
// older reading (a snooze still listed) over the newer.
func (a *App) publishHomeRead(ctx context.Context, userID, notice string, check bool) {
	defer a.homes.lock(userID)()
	blocks := a.homeBlocks(ctx, userID, notice, check)
	_, err := a.api.PublishViewContext(ctx, slack.PublishViewContextRequest{
		UserID: userID,
		View:   slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: blocks}},
	})
	if err != nil {
		a.log.Warn("cannot publish the Home tab", "user", userID, "err", err)
	}
}

// homeLocks holds a lock per person whose Home tab was published.
type homeLocks struct {
	mu    sync.Mutex
	users map[string]*sync.Mutex
}

// lock takes user's lock and returns its release.
func (h *homeLocks) lock(user string) func() {
	h.mu.Lock()
	if h.users == nil {
		h.users = map[string]*sync.Mutex{}
	}
	l := h.users[user]
	if l == nil {
		l = &sync.Mutex{}
		h.users[user] = l
	}
	h.mu.Unlock()
	l.Lock()
	return l.Unlock
}

func mrkdwn(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, text, false, false)
}

func plain(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, text, false, false)
}

func section(text string, accessory slack.BlockElement) *slack.SectionBlock {
	var acc *slack.Accessory
	if accessory != nil {
		acc = slack.NewAccessory(accessory)
	}
	return slack.NewSectionBlock(mrkdwn(text), nil, acc)
}

func button(actionID, value, text string, style slack.Style) *slack.ButtonBlockElement {
	b := slack.NewButtonBlockElement(actionID, value, plain(text))
	if style != "" {
		b = b.WithStyle(style)
	}
	return b
}

// homeBlocks builds the Home tab: the caller's settings with controls,
// whether the bot can read their calendar (and how to fix it), their next
// reminders, and the series they muted.
func (a *App) homeBlocks(ctx context.Context, userID, notice string, check bool) []slack.Block {
	blocks := []slack.Block{slack.NewHeaderBlock(plain("Meeting reminders"))}
	if notice != "" {
		blocks = append(blocks, section(notice, nil))
	}
	p, err := a.people.get(ctx, userID)
	if err != nil {
		return append(blocks, section(lookupFailed(err), nil))
	}
	subs, err := a.personal(ctx, userID)
	if err != nil {
		return append(blocks, section(a.failed(err, userID), nil))
	}
	set, _, err := a.store.SlackSettingsOf(ctx, userID)
	if err != nil {
		return append(blocks, section(a.failed(err, userID), nil))
	}
	fixed, isFixed := a.operatorDM(p)
	on := len(subs) > 0
	offsets := a.offsetsFor(set)
	if set.OnCalendar && len(set.Offsets) == 0 {
		offsets = nil
	}
	onCal, rules := set.OnCalendar, set.Rules
	calendar := p.Email
	switch {
	case on:
		offsets, calendar, onCal, rules = subs[0].Offsets, subs[0].CalendarID, subs[0].OnCalendar, subs[0].Rules
		blocks = append(blocks, section(fmt.Sprintf("*Reminders: on.* For the meetings on %s, I DM you %s.", escape(calendar), remindedText(offsets, onCal)),
			button(actionOff, "off", "Turn off", slack.StyleDanger)))
	case isFixed:
		offsets, calendar = fixed.Offsets, fixed.CalendarID
		blocks = append(blocks, section(fmt.Sprintf("*Reminders: on*, from the bot's configuration: for the meetings on %s, %s. They can't be changed here; ask whoever runs the bot.",
			escape(calendar), eachMeeting(offsets)), nil))
	default:
		blocks = append(blocks, section(fmt.Sprintf("*Reminders: off.* Turn them on for a DM %s on your calendar.", withRules(remindedText(offsets, onCal), rules)),
			button(actionOn, "on", "Turn on", slack.StylePrimary)))
	}
	if !isFixed || on {
		blocks = append(blocks, section("*When:* "+remindedText(offsets, onCal), a.offsetsMenu(offsets)))
		blocks = append(blocks, a.rulesBlocks(onCal, rules)...)
	}

	agenda := "*Daily agenda:* none. Pick a time to get a DM listing each day's meetings."
	if set.Agenda != "" {
		agenda = fmt.Sprintf("*Daily agenda:* at %s (%s) on each day that has meetings.", set.Agenda, escape(cmp.Or(p.TZ, set.TZ, "UTC")))
	}
	picker := slack.NewTimePickerBlockElement(actionAgenda)
	picker.Placeholder = plain("Agenda time")
	picker.InitialTime = set.Agenda // none: any time picked is a change
	controls := []slack.BlockElement{picker}
	if set.Agenda != "" {
		controls = append(controls, button(actionAgendaOff, "off", "No agenda", ""))
	}
	blocks = append(blocks, section(agenda, nil), slack.NewActionBlock("agenda", controls...), slack.NewDividerBlock())

	blocks = append(blocks, a.channelsBlocks(ctx, userID)...)
	blocks = append(blocks, a.connectBlocks(ctx, userID)...)
	blocks = append(blocks, a.statusBlocks(ctx, userID)...)
	blocks = append(blocks, a.invitesBlocks(ctx, userID)...)
	blocks = append(blocks, a.calendarBlocks(ctx, userID, calendar, check, on || isFixed, choice{offsets, onCal && !isFixed}, subs, p.TZ)...)
	blocks = append(blocks, a.snoozeBlocks(ctx, userID)...)
	blocks = append(blocks, a.mutedBlocks(ctx, userID)...)
	return append(blocks, slack.NewContextBlock("help", mrkdwn(fmt.Sprintf(
		"In a channel, `%[1]s subscribe <calendar>` posts a calendar's reminders there. `%[1]s help` lists everything.", a.command))))
}

// offsetsMenu offers offsetChoices (and the current offsets) the sweep
// cannot miss.
func (a *App) offsetsMenu(current []time.Duration) *slack.SelectBlockElement {
	var opts []*slack.OptionBlockObject
	var initial *slack.OptionBlockObject
	add := func(offs []time.Duration) {
		if checkOffsets(offs, a.limits) != nil {
			return
		}
		v := offsetsValue(offs)
		for _, o := range opts {
			if o.Value == v {
				return
			}
		}
		o := slack.NewOptionBlockObject(v, plain(offsetsLabel(offs)), nil)
		opts = append(opts, o)
		if slices.Equal(sorted(offs), sorted(current)) {
			initial = o
		}
	}
	add(current)
	for _, c := range offsetChoices {
		add(c)
	}
	menu := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Change"), actionOffsets, opts...)
	menu.InitialOption = initial
	return menu
}

func sorted(offs []time.Duration) []time.Duration {
	s := slices.Clone(offs)
	slices.Sort(s)
	return s
}

// calendarBlocks say whether the bot can read calendar and what is next.
func (a *App) calendarBlocks(ctx context.Context, userID, calendar string, check, on bool, when choice, subs []meetingbot.SlackSubscription, tz string) []slack.Block {
	if calendar == "" {
		return []slack.Block{section("*Your calendar:* "+noEmail, nil)}
	}
	var muted []string
	for _, s := range subs {
		muted = append(muted, s.Muted...)
	}
	meetings, err := a.upcoming(ctx, userID, calendar, check, muted, 20)
	if errors.Is(err, errTooSoon) {
		return []slack.Block{section(fmt.Sprintf(":hourglass: *Your calendar:* I read %s moments ago, more than once; *Check again* in a minute.", escape(calendar)), button(actionRefresh, "check", "Check again", ""))}
	}
	if err != nil {
		return []slack.Block{section(":warning: *Your calendar:* "+a.unreadable(calendar, "*Check again*", err), button(actionRefresh, "check", "Check again", ""))}
	}
	blocks := []slack.Block{section(fmt.Sprintf(":white_check_mark: *Your calendar:* I can read %s.", escape(calendar)), button(actionRefresh, "check", "Check again", ""))}
	if !on {
		return blocks
	}
	rs := reminders(a.now(), meetings, when)
	if len(rs) == 0 {
		return append(blocks, section(fmt.Sprintf("*Next reminders:* none; no meetings in the next %s.", days(a.horizon)), nil))
	}
	lines := []string{"*Next reminders:*"}
	for _, r := range rs[:min(len(rs), maxHomeReminders)] {
		lines = append(lines, fmt.Sprintf("• %s: *%s* (%s)", dateToken(r.At, tz), escape(clip(r.Meeting.Title, 150)), whenText(r.Offset)))
	}
	return append(blocks, section(strings.Join(lines, "\n"), nil))
}

// mutedBlocks list the series muted for the subscriptions the caller has
// or set up, each with "Unmute".
func (a *App) mutedBlocks(ctx context.Context, userID string) []slack.Block {
	subs, err := a.store.SlackSubscriptions(ctx)
	if err != nil {
		a.log.Warn("cannot list subscriptions for the Home tab", "user", userID, "err", err)
		return nil
	}
	var blocks []slack.Block
	for _, s := range subs {
		if s.Destination != userID && s.CreatedBy != userID {
			continue
		}
		ms, err := a.store.MutedSeriesOf(ctx, s.ID)
		if err != nil {
			a.log.Warn("cannot list muted series", "subscription", s.ID, "err", err)
			continue
		}
		where := "in your DMs"
		if s.Kind == meetingbot.SlackChannel {
			where = fmt.Sprintf("in <#%s> (%s)", s.Destination, escape(s.CalendarID))
		}
		for _, m := range ms {
			if len(blocks) == maxHomeMuted {
				return blocks
			}
			if len(blocks) == 0 {
				blocks = append(blocks, slack.NewDividerBlock(), section("*Muted series:* no reminders of these.", nil))
			}
			title := cmp.Or(m.Title, m.Series)
			blocks = append(blocks, section(fmt.Sprintf("*%s* %s", escape(clip(title, 150)), where),
				button(actionUnmute, action.MuteValue(s.ID, m.Series, m.Title), "Unmute", "")))
		}
	}
	return blocks
}

// clip cuts s to n characters.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// interaction handles a block_actions payload: the Home tab's controls and
// the buttons of reminders. The caller's Home tab is republished after,
// unless the payload held only answers to invitations, which show on the
// message clicked.
func (a *App) interaction(ctx context.Context, cb slack.InteractionCallback) {
	if cb.Type != slack.InteractionTypeBlockActions {
		return
	}
	user := cb.User.ID
	var notice string
	check, home := false, false
	for _, act := range cb.ActionCallback.BlockActions {
		if action.IsRSVP(act.ActionID) {
			a.rsvpClick(ctx, cb, act) // on a message: the Home tab stays
			continue
		}
		home = true
		switch act.ActionID {
		case action.SnoozeStart, action.Snooze5m:
			continue // answered before Slack was (snoozeClicks)
		case actionSnoozeCancel:
			notice = a.cancelSnooze(ctx, user, act.Value)
		case actionOn:
			notice = a.turnOn(ctx, user, choice{}, "*Turn on*")
		case actionOff:
			notice = a.turnOff(ctx, user)
		case actionOffsets:
			offs, err := parseOffsetsArg(act.SelectedOption.Value, "10m,1m", a.limits)
			if err != nil || offs == nil {
				notice = "That choice is out of date; pick again."
				break
			}
			notice = a.setOffsets(ctx, user, choice{offs, a.onCalendar(ctx, user)})
		case actionAgenda:
			at, ok := parseTimeOfDay(act.SelectedTime)
			if !ok {
				notice = "That is not a time of day; pick again."
				break
			}
			notice = a.setAgenda(ctx, user, at)
		case actionAgendaOff:
			notice = a.setAgenda(ctx, user, "")
		case actionRefresh:
			check = true
		case actionUnmute:
			notice = a.unmute(ctx, user, act.Value)
		case action.MuteSeries:
			msg := a.mute(ctx, user, act.Value)
			a.respond(ctx, cb.ResponseURL, cb.Channel.ID, user, msg)
			notice = msg
		default:
			if n, ok := a.homeRulesAction(ctx, user, act); ok {
				notice = n
				break
			}
			if n, ok := a.connectAction(ctx, cb, act); ok {
				notice = n
				break
			}
			if n, ok := a.invitesAction(ctx, user, act.ActionID); ok {
				notice = n
				break
			}
			if n, ok := a.channelsAction(ctx, user, act); ok {
				notice = n
				break
			}
			a.log.Debug("unknown block action", "action", act.ActionID, "user", user)
			continue
		}
	}
	if home {
		a.publishHomeRead(ctx, user, notice, check)
	}
}

// onCalendar reports whether the caller's reminders are at their
// calendar's own reminders too: their subscription's, or their settings'.
func (a *App) onCalendar(ctx context.Context, userID string) bool {
	if subs, err := a.personal(ctx, userID); err == nil && len(subs) > 0 {
		return subs[0].OnCalendar
	}
	set, _, _ := a.store.SlackSettingsOf(ctx, userID)
	return set.OnCalendar
}
