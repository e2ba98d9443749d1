package notify

import (
	"context"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify/action"
	"github.com/slack-go/slack"
)

// A reminder in a DM to the calendar's owner, of a meeting they were
// invited to (Meeting.Response is set: an attendee, not the organizer),
// says their answer and carries Going / Maybe / No (docs/design.md,
// "Reminder actions"): a context block (action.AnswerBlock) with
// action.AnswerLine, and an actions block of its own
// (action.RSVPBlock), so that a click can replace the line
// and a person who cannot answer from Slack loses the buttons alone.

// answerLabels are the answer buttons' labels, by answer.
var answerLabels = []struct {
	actionID string
	r        meetingbot.Response
	label    string
}{
	{action.RSVPGoing, meetingbot.ResponseAccepted, "Going"},
	{action.RSVPMaybe, meetingbot.ResponseTentative, "Maybe"},
	{action.RSVPNo, meetingbot.ResponseDeclined, "No"},
}

// answerBlocks are the line saying answer r and the buttons answering the
// event t names, or the line alone when t's value cannot fit a button.
func answerBlocks(t action.RSVP, r meetingbot.Response) []slack.Block {
	blocks := []slack.Block{slack.NewContextBlock(action.AnswerBlock, markdown(action.AnswerLine(r)))}
	value := action.RSVPValue(t)
	if value == "" {
		return blocks
	}
	buttons := make([]slack.BlockElement, 0, len(answerLabels))
	for _, b := range answerLabels {
		btn := slack.NewButtonBlockElement(b.actionID, value, slack.NewTextBlockObject(slack.PlainTextType, b.label, false, false))
		if b.r == r {
			btn = btn.WithStyle(slack.StylePrimary) // the answer given
		}
		buttons = append(buttons, btn)
	}
	return append(blocks, slack.NewActionBlock(action.RSVPBlock, buttons...))
}

// reminderAnswer returns the answer blocks of r: for a reminder in a DM to
// its calendar's owner of a meeting they were invited to, its answer and
// the buttons answering it on that calendar; nil for any other.
func reminderAnswer(r meetingbot.Reminder) []slack.Block {
	if r.Meeting.Response == meetingbot.ResponseNone || !toOwner(r.Subscription) {
		return nil
	}
	return answerBlocks(action.RSVP{Calendar: r.Subscription.CalendarID, Event: r.Meeting.ID}, r.Meeting.Response)
}

// AnswerFor makes the DM reminders of the calendars f says can be
// answered from Slack (their owner connected their Google account, and
// self-service hears the clicks) carry Going / Maybe / No. The bot is
// built with it once people's accounts exist, before any reminder goes
// out; until then, and without it, nobody can answer.
func (s *Slack) AnswerFor(f func(ctx context.Context, calendarID string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.canAnswer = f
}

// answerable returns blocks without their answer buttons unless the
// owner of calendarID can answer from Slack (AnswerFor); the line saying
// their answer stays.
func (s *Slack) answerable(ctx context.Context, calendarID string, blocks []slack.Block) []slack.Block {
	has := false
	for _, b := range blocks {
		if a, ok := b.(*slack.ActionBlock); ok && a.BlockID == action.RSVPBlock {
			has = true
		}
	}
	s.mu.Lock()
	can := s.canAnswer
	s.mu.Unlock()
	if !has || (can != nil && can(ctx, calendarID)) {
		return blocks
	}
	out := make([]slack.Block, 0, len(blocks))
	for _, b := range blocks {
		if a, ok := b.(*slack.ActionBlock); ok && a.BlockID == action.RSVPBlock {
			continue
		}
		out = append(out, b)
	}
	return out
}

// answerWord is answer r in a digest's line: "Going", "Maybe", "No", or
// "not answered".
func answerWord(r meetingbot.Response) string {
	if r.Answer() {
		return r.Word()
	}
	return "not answered"
}
