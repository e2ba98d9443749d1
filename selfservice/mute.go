package selfservice

import (
	"context"
	"fmt"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify/action"
)

// The "Mute this series" button's action ID and value are package
// action's (action.MuteSeries, action.MuteValue): the notify package puts
// the button on reminders without importing this one.

// mayMute finds the subscription of v and says whether userID may mute or
// unmute its series; if not, the sentence says why.
func (a *App) mayMute(ctx context.Context, userID string, v action.Mute) (meetingbot.SlackSubscription, string) {
	sub, ok, err := a.store.SlackSubscription(ctx, v.Subscription)
	if err != nil {
		return sub, a.failed(err, userID)
	}
	if !ok {
		for _, f := range a.operator {
			if f.ID == v.Subscription {
				return sub, "These reminders come from the bot's configuration (CALENDARS), which can't be changed from Slack: ask whoever runs the bot. Nothing changed."
			}
		}
		return sub, "Those reminders have been turned off since, so there is nothing to mute."
	}
	switch sub.Kind {
	case meetingbot.SlackPersonal:
		if sub.Destination != userID {
			return sub, fmt.Sprintf("Only <@%s> can mute their own reminders. Nothing changed.", sub.Destination)
		}
	default:
		p, err := a.people.get(ctx, userID)
		if err != nil {
			return sub, lookupFailed(err)
		}
		if ok, why := a.mayChange(p, sub.CreatedBy, sub.CalendarID); !ok {
			return sub, why
		}
	}
	return sub, ""
}

// where says where a subscription posts, for a sentence.
func where(sub meetingbot.SlackSubscription) string {
	if sub.Kind == meetingbot.SlackPersonal {
		return "in your DMs"
	}
	return fmt.Sprintf("in <#%s>", sub.Destination)
}

// mute mutes a recurring series for one subscription, from the button of
// one of its reminders.
func (a *App) mute(ctx context.Context, userID, value string) string {
	v, ok := action.ParseMute(value)
	if !ok {
		return "This button is out of date, so nothing changed."
	}
	sub, refused := a.mayMute(ctx, userID, v)
	if refused != "" {
		return refused
	}
	title := cmpTitle(v)
	added, err := a.store.MuteSeries(ctx, meetingbot.MutedSeries{
		Subscription: sub.ID, Series: v.Series, Title: v.Title, MutedBy: userID, MutedAt: a.now(),
	})
	if err != nil {
		return a.failed(err, userID)
	}
	if !added {
		return fmt.Sprintf("Already muted %s: %s.", where(sub), title)
	}
	a.log.Info("series muted", "user", userID, "subscription", sub.ID, "series", v.Series)
	return fmt.Sprintf("Muted %s %s: no more reminders of it there. You can unmute it in my Home tab.", title, where(sub))
}

// unmute brings back the reminders of a muted series.
func (a *App) unmute(ctx context.Context, userID, value string) string {
	v, ok := action.ParseMute(value)
	if !ok {
		return "This button is out of date, so nothing changed."
	}
	sub, refused := a.mayMute(ctx, userID, v)
	if refused != "" {
		return refused
	}
	removed, err := a.store.UnmuteSeries(ctx, sub.ID, v.Series)
	if err != nil {
		return a.failed(err, userID)
	}
	if !removed {
		return fmt.Sprintf("Not muted %s: %s.", where(sub), cmpTitle(v))
	}
	a.log.Info("series unmuted", "user", userID, "subscription", sub.ID, "series", v.Series)
	return fmt.Sprintf("Unmuted %s: its reminders come %s again.", cmpTitle(v), where(sub))
}

func cmpTitle(v action.Mute) string {
	if v.Title == "" {
		return "this series"
	}
	return "*" + escape(v.Title) + "*"
}
