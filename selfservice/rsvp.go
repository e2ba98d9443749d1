package selfservice

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify/action"
)

// Answers answers invitations for the people who click Going, Maybe or
// No on a reminder or a notice (docs/design.md, "Reminder actions");
// *rsvp.Service provides it.
type Answers interface {
	// Answer sets user's answer r to the invitation to event, on user's
	// own connected calendar (calendar, when not "", must be it). Its errors are package meetingbot's
	// ErrNotConnected, ErrConnectionBroken, ErrNotYourCalendar,
	// ErrNeedsWrite, ErrCannotEdit, ErrNotInvited and ErrGone, each
	// permanent; any other is transient.
	Answer(ctx context.Context, user, calendar, event string, r meetingbot.Response) (meetingbot.Answered, error)
	// Refresh has calendarID read again at once, after an answer changed
	// it: a declined meeting's reminders stop and say so.
	Refresh(ctx context.Context, calendarID string)
	// ConsentLink returns a link, for user only, connecting their Google
	// account with the scope that answering needs.
	ConsentLink(ctx context.Context, user string) (string, error)
}

// answerWithin bounds the work of one click: reading the event, writing
// the answer (read again on each conflict), and telling the person.
const answerWithin = 45 * time.Second

// rsvpClick answers a click on an answer control (a button of a reminder
// or a notice, or a digest line's menu), after Slack was acknowledged:
// the answer is written, the clicked message shows it, the person is
// told through the response_url, and the calendar is read again. An
// answer that cannot be given says why and what to do, to the clicker
// alone.
func (a *App) rsvpClick(ctx context.Context, cb slack.InteractionCallback, act *slack.BlockAction) {
	user := cb.User.ID
	tell := func(text string) { a.respond(ctx, cb.ResponseURL, cb.Channel.ID, user, text) }
	value := act.Value
	if act.ActionID == action.RSVPMenu {
		value = act.SelectedOption.Value
	}
	t, ok := action.ParseRSVP(value)
	r, isButton := action.Answer(act.ActionID)
	if !isButton {
		r = t.Response
	}
	if !ok || !r.Answer() || a.answers == nil {
		tell("That button is out of date, so nothing changed.")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, answerWithin)
	defer cancel()
	got, err := a.answers.Answer(ctx, user, t.Calendar, t.Event, r)
	if err != nil {
		tell(a.answerFailed(ctx, user, err))
		return
	}
	title := escape(clip(cmp.Or(got.Title, "the meeting"), 150))
	if got.Was == got.Response {
		tell(fmt.Sprintf("You had answered %s to *%s* already, so nothing changed.", strings.ToLower(r.Word()), title))
		a.showAnswer(ctx, cb, act, r)
		return
	}
	a.showAnswer(ctx, cb, act, r)
	tell(answeredText(got, title))
	// After the message shows the answer: the edit of a declined
	// meeting's reminders follows this read.
	a.answers.Refresh(ctx, got.Calendar)
}

// answeredText tells the person what their answer did.
func answeredText(got meetingbot.Answered, title string) string {
	every := ""
	if got.Series {
		every = " (every occurrence)"
	}
	switch got.Response {
	case meetingbot.ResponseDeclined:
		return fmt.Sprintf("You declined *%s*%s: I told Google, and I won't remind you of it.", title, every)
	case meetingbot.ResponseTentative:
		return fmt.Sprintf("Maybe to *%s*%s: I told Google.", title, every)
	}
	return fmt.Sprintf("Going to *%s*%s: I told Google.", title, every)
}

// answerFailed says why an answer was not given, and what to do.
func (a *App) answerFailed(ctx context.Context, user string, err error) string {
	link := func(label string) string {
		l, lerr := a.answers.ConsentLink(ctx, user)
		if lerr != nil {
			a.log.Warn("cannot make a consent link", "user", user, "err", lerr)
			return fmt.Sprintf("`%s connect` gives you a link.", a.command)
		}
		return fmt.Sprintf("<%s|%s>\nThe link is yours only: it works once, for 10 minutes. Then click again.", l, label)
	}
	switch {
	case errors.Is(err, meetingbot.ErrConnectionBroken):
		return "Your Google connection stopped (its access was revoked or expired), so I can't answer for you. Reconnect, letting me answer your invitations: " +
			link("Reconnect Google Calendar")
	case errors.Is(err, meetingbot.ErrNotConnected):
		return "To answer from Slack, connect your Google account and let me change your answers to invitations (nothing else): " +
			link("Connect Google Calendar")
	case errors.Is(err, meetingbot.ErrNeedsWrite):
		return "To answer from Slack, let me change your answers to invitations: Google asks you once, and I change nothing else. " +
			link("Allow answering from Slack")
	case errors.Is(err, meetingbot.ErrNotYourCalendar):
		return "That button answers for someone else's calendar, so nothing changed: only the person invited can answer, from their own reminder."
	case errors.Is(err, meetingbot.ErrCannotEdit):
		return "Google won't let me change that event on your calendar (you may only read it there), so nothing changed. Answer in Google Calendar instead."
	case errors.Is(err, meetingbot.ErrNotInvited):
		return "You organise that meeting, or you are not on its guest list yourself (as when invited through a group), so there is no invitation of yours to answer from Slack. Open it in Google Calendar instead."
	case errors.Is(err, meetingbot.ErrGone):
		return "That meeting was deleted or cancelled, so there is nothing to answer."
	case meetingbot.IsPermanent(err):
		a.log.Error("an answer was refused", "user", user, "err", err)
		return "Google refused that answer, so nothing changed. Answer in Google Calendar instead."
	}
	a.log.Warn("an answer failed; the person may click again", "user", user, "err", err)
	return "Google didn't take the answer just now, so nothing changed. Click again in a moment."
}

// showAnswer edits the message clicked (chat.update, which keeps its
// metadata) so that it shows answer r: the answer line of a reminder or
// a notice, with the button of the answer marked; the menu of a
// digest's line set to it. A message Slack did not send whole (an
// ephemeral one, or none) is left alone.
func (a *App) showAnswer(ctx context.Context, cb slack.InteractionCallback, act *slack.BlockAction, r meetingbot.Response) {
	channel, ts := cb.Container.ChannelID, cb.Container.MessageTs
	if channel == "" {
		channel = cb.Channel.ID
	}
	if ts == "" {
		ts = cb.Message.Timestamp
	}
	if channel == "" || ts == "" || cb.Container.IsEphemeral || len(cb.Message.Blocks.BlockSet) == 0 {
		return
	}
	blocks, ok := answeredBlocks(cb.Message.Blocks.BlockSet, act, r)
	if !ok {
		return
	}
	opts := []slack.MsgOption{slack.MsgOptionBlocks(blocks...)}
	if cb.Message.Text != "" {
		opts = append(opts, slack.MsgOptionText(cb.Message.Text, false))
	}
	if _, _, _, err := a.api.UpdateMessageContext(ctx, channel, ts, opts...); err != nil {
		a.log.Warn("cannot show the answer on the message clicked", "user", cb.User.ID, "channel", channel, "err", err)
	}
}

// answeredBlocks returns blocks as they show answer r after the click
// act: for a button, the answer line (action.AnswerBlock)
// replaced, or put before the buttons when there is none, and the
// button of r marked; for a digest's menu, the line's menu set to the
// option chosen. ok is false when blocks hold nothing of the click.
func answeredBlocks(blocks []slack.Block, act *slack.BlockAction, r meetingbot.Response) (out []slack.Block, ok bool) {
	out = make([]slack.Block, 0, len(blocks)+1)
	line := slack.NewContextBlock(action.AnswerBlock, mrkdwnVerbatim(action.AnswerLine(r)))
	if act.ActionID == action.RSVPMenu {
		for _, b := range blocks {
			if sec, isSec := b.(*slack.SectionBlock); isSec && sec.BlockID == act.BlockID && sec.Accessory != nil && sec.Accessory.SelectElement != nil {
				menu := *sec.Accessory.SelectElement
				chosen := act.SelectedOption
				menu.InitialOption = &chosen
				edited := *sec
				edited.Accessory = slack.NewAccessory(&menu)
				out, ok = append(out, &edited), true
				continue
			}
			out = append(out, b)
		}
		return out, ok
	}
	for _, b := range blocks {
		switch blk := b.(type) {
		case *slack.ContextBlock:
			if blk.BlockID == action.AnswerBlock {
				continue // replaced before the buttons
			}
		case *slack.ActionBlock:
			if blk.BlockID == action.RSVPBlock {
				out = append(out, line, markAnswer(blk, r))
				ok = true
				continue
			}
		}
		out = append(out, b)
	}
	return out, ok
}

// markAnswer returns the answer buttons with the button of r marked as
// the answer given.
func markAnswer(a *slack.ActionBlock, r meetingbot.Response) *slack.ActionBlock {
	els := make([]slack.BlockElement, 0, len(a.Elements.ElementSet))
	for _, el := range a.Elements.ElementSet {
		if btn, isBtn := el.(*slack.ButtonBlockElement); isBtn {
			if ans, isAnswer := action.Answer(btn.ActionID); isAnswer {
				b := *btn
				b.Style = ""
				if ans == r {
					b.Style = slack.StylePrimary
				}
				el = &b
			}
		}
		els = append(els, el)
	}
	return slack.NewActionBlock(a.BlockID, els...)
}

// mrkdwnVerbatim is a mrkdwn text Slack shows verbatim, as the bot's
// messages are written.
func mrkdwnVerbatim(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, text, false, true)
}
