package selfservice

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify/action"
	"github.com/slack-go/slack"
)

// Snoozes is what self-service asks of snoozes (the "Remind me at start"
// and "In 5 min" buttons of reminders); *snooze.Service provides it.
type Snoozes interface {
	// Click stores the snooze ask a person clicked for at clicked
	// (Slack's action_ts) and returns the answer.
	Click(ctx context.Context, ask meetingbot.Snooze, clicked time.Time) (string, error)
	// Pending returns user's pending snoozes, by instant.
	Pending(ctx context.Context, user string) ([]meetingbot.Timer, error)
	// Cancel cancels user's pending snooze key and returns the answer.
	Cancel(ctx context.Context, user, key string) (string, error)
}

// actionSnoozeCancel is the Home tab's "Cancel" of a pending snooze; its
// value is the timer's key.
const actionSnoozeCancel = "snooze_cancel"

// snoozeWithin bounds storing a click's snooze before Slack hears back,
// which it waits 3 seconds for.
const snoozeWithin = 2 * time.Second

// maxHomeSnoozes bounds the snoozes the Home tab lists.
const maxHomeSnoozes = 10

// snoozeClicks stores the timers of the snooze buttons clicked in cb
// before Slack is answered, so that a click Slack saw succeed is never
// lost, and returns what answers the person (through the response_url, or
// an ephemeral message), to run after. A click on "In 5 min" counts from
// Slack's action_ts, the same in Slack's retries of it wherever they
// land, so that they make one timer.
func (a *App) snoozeClicks(ctx context.Context, cb slack.InteractionCallback) func(context.Context) {
	none := func(context.Context) {}
	if a.snoozes == nil || cb.Type != slack.InteractionTypeBlockActions {
		return none
	}
	user := cb.User.ID
	var answers []string
	for _, act := range cb.ActionCallback.BlockActions {
		mode, ok := action.SnoozeMode(act.ActionID)
		if !ok {
			continue
		}
		v, ok := action.ParseSnooze(act.Value)
		if !ok {
			answers = append(answers, "This button is out of date, so nothing changed.")
			continue
		}
		ask := meetingbot.Snooze{User: user, Mode: mode, Reminder: v.Reminder, Subscription: v.Subscription, Meeting: v.Meeting()}
		store, cancel := context.WithTimeout(context.WithoutCancel(ctx), snoozeWithin)
		text, err := a.snoozes.Click(store, ask, actionTime(string(act.ActionTs)))
		cancel()
		if err != nil {
			a.log.Error("store a snooze", "user", user, "action", act.ActionID, "err", err)
			text = "I couldn't set that reminder just now; try the button again in a moment."
		}
		answers = append(answers, text)
	}
	if len(answers) == 0 {
		return none
	}
	return func(ctx context.Context) {
		for _, text := range answers {
			a.respond(ctx, cb.ResponseURL, cb.Channel.ID, user, text)
		}
	}
}

// actionTime reads an action_ts ("1548426417.840180"); zero when it does
// not parse.
func actionTime(ts string) time.Time {
	sec, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || s <= 0 {
		return time.Time{}
	}
	us, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	return time.UnixMicro(s*1e6 + us).UTC()
}

// cancelSnooze cancels a pending snooze from the Home tab.
func (a *App) cancelSnooze(ctx context.Context, user, key string) string {
	if a.snoozes == nil {
		return "That button is out of date, so nothing changed."
	}
	text, err := a.snoozes.Cancel(ctx, user, key)
	if err != nil {
		return a.failed(err, user)
	}
	return text
}

// snoozeBlocks list the caller's pending snoozes, each with "Cancel".
func (a *App) snoozeBlocks(ctx context.Context, user string) []slack.Block {
	if a.snoozes == nil {
		return nil
	}
	pending, err := a.snoozes.Pending(ctx, user)
	if err != nil {
		a.log.Warn("cannot list snoozes for the Home tab", "user", user, "err", err)
		return nil
	}
	if len(pending) == 0 {
		return nil
	}
	blocks := []slack.Block{slack.NewDividerBlock(), section("*Reminders you asked for:*", nil)}
	for _, t := range pending[:min(len(pending), maxHomeSnoozes)] {
		s, ok := meetingbot.ParseSnooze(t)
		if !ok {
			continue
		}
		title, why := s.Meeting.Title, "at its start"
		if title == "" {
			title = "(No title)"
		}
		if s.Mode == meetingbot.SnoozeIn5m {
			why = "5 minutes after you clicked"
		}
		text := fmt.Sprintf("*%s* at <!date^%d^{date_short_pretty} {time}|%s> (%s)", escape(clip(title, 150)), t.FireAt.Unix(), t.FireAt.UTC().Format("2006-01-02 15:04 UTC"), why)
		blocks = append(blocks, section(text, button(actionSnoozeCancel, t.Key, "Cancel", "")))
	}
	if n := len(pending) - maxHomeSnoozes; n > 0 {
		blocks = append(blocks, slack.NewContextBlock("snoozes_more", mrkdwn(fmt.Sprintf("and %d more", n))))
	}
	return blocks
}
