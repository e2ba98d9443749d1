package selfservice

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot"
)

// The Home tab shows the channel subscriptions a person set up, what each
// posts (reminders, the calendar's changes, agendas), and turns the
// changes on and off; "/meetingbot subscribe" in the channel changes the
// rest.

// actionChanges turns a channel subscription's change notices on or off;
// its value is the subscription's ID.
const actionChanges = "home_channel_changes"

// maxHomeChannels bounds the channel subscriptions the Home tab lists.
const maxHomeChannels = 10

// channelsBlocks lists the channel subscriptions userID set up.
func (a *App) channelsBlocks(ctx context.Context, userID string) []slack.Block {
	all, err := a.store.SlackSubscriptions(ctx)
	if err != nil {
		return []slack.Block{section(a.failed(err, userID), nil), slack.NewDividerBlock()}
	}
	var blocks []slack.Block
	for _, s := range all {
		if s.Kind != meetingbot.SlackChannel || s.CreatedBy != userID {
			continue
		}
		if len(blocks) == maxHomeChannels {
			break
		}
		label, style := "Tell changes", slack.StylePrimary
		if !s.ChangesSince.IsZero() {
			label, style = "Stop changes", slack.Style("")
		}
		text := fmt.Sprintf("*<#%s>*: %s, %s.", s.Destination, escape(s.CalendarID), postsText(reminding(s.Offsets, s.OnCalendar, s.Rules), s.Following))
		blocks = append(blocks, section(text, button(actionChanges, s.ID, label, style)))
	}
	if len(blocks) == 0 {
		return nil
	}
	head := section("*Channels you set up*", nil)
	help := slack.NewContextBlock("channels_help", mrkdwn(fmt.Sprintf(
		"In the channel, `%s subscribe <calendar> [offsets|none] [changes] [daily HH:MM] [weekly <day> HH:MM]` changes what it posts.", a.command)))
	return append(append([]slack.Block{head}, blocks...), help, slack.NewDividerBlock())
}

// channelsAction handles the Home tab's channel controls.
func (a *App) channelsAction(ctx context.Context, user string, act *slack.BlockAction) (notice string, handled bool) {
	if act.ActionID != actionChanges {
		return "", false
	}
	return a.toggleChanges(ctx, user, act.Value), true
}

// toggleChanges turns the change notices of the channel subscription id
// on (from now) or off, for one who may change it. Turned off, it keeps
// its reminders and agendas; with nothing else, it stays on.
func (a *App) toggleChanges(ctx context.Context, user, id string) string {
	sub, ok, err := a.store.SlackSubscription(ctx, id)
	if err != nil {
		return a.failed(err, user)
	}
	if !ok || sub.Kind != meetingbot.SlackChannel {
		return "That channel no longer posts this calendar; nothing changed."
	}
	p, err := a.people.get(ctx, user)
	if err != nil {
		return lookupFailed(err)
	}
	if ok, why := a.mayChange(p, sub.CreatedBy, sub.CalendarID); !ok {
		return why
	}
	f := sub.Following
	if f.ChangesSince.IsZero() {
		f.ChangesSince = a.now()
	} else {
		f.ChangesSince = meetingbot.Following{}.ChangesSince
		if !f.Any() && len(sub.Offsets) == 0 {
			return fmt.Sprintf("<#%s> posts nothing but the changes of %s; to stop them, `%s unsubscribe %s` there. Nothing changed.",
				sub.Destination, escape(sub.CalendarID), a.command, escape(sub.CalendarID))
		}
	}
	if _, err := a.store.SetSlackSubscriptionFollowing(ctx, sub.ID, sub.Offsets, f); err != nil {
		return a.failed(err, user)
	}
	a.log.Info("change notices turned "+map[bool]string{true: "on", false: "off"}[!f.ChangesSince.IsZero()], "user", user, "subscription", sub.ID)
	return fmt.Sprintf("Done: <#%s> posts %s of %s.", sub.Destination, postsText(reminding(sub.Offsets, sub.OnCalendar, sub.Rules), f), escape(sub.CalendarID))
}
