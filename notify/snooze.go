package notify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify/action"
	"github.com/slack-go/slack"
)

// snoozeButtons are the buttons a reminder posted at now carries while
// its meeting has not started (docs/usage.md, "Remind me at start"):
// "Remind me at start", and "In 5 min" with meetingbot.SnoozeMinLeft or
// more to go.
// Their value names the reminder (for a snooze's own DM, the reminder
// first clicked) and its meeting as the reminder shows it.
func snoozeButtons(r meetingbot.Reminder, now time.Time) []slack.BlockElement {
	m, _ := shown(r)
	if !now.Before(m.Start) {
		return nil
	}
	shownAs := meetingbot.Meeting{ID: r.Meeting.ID, Title: inert(m.Title), Start: m.Start, End: m.End}
	if joinButton(m.JoinURL, nil) {
		shownAs.JoinURL = m.JoinURL
	}
	value := action.SnoozeValue(r.Subscription.ID, meetingbot.SnoozedReminder(r.Key), shownAs)
	if value == "" {
		return nil
	}
	out := []slack.BlockElement{slack.NewButtonBlockElement(action.SnoozeStart, value,
		slack.NewTextBlockObject(slack.PlainTextType, "Remind me at start", false, false))}
	if m.Start.Sub(now) >= meetingbot.SnoozeMinLeft {
		out = append(out, slack.NewButtonBlockElement(action.Snooze5m, value,
			slack.NewTextBlockObject(slack.PlainTextType, "In 5 min", false, false)))
	}
	return out
}

// snoozeButton reports whether btn is one of snoozeButtons.
func snoozeButton(btn *slack.ButtonBlockElement) bool {
	return btn != nil && (btn.ActionID == action.SnoozeStart || btn.ActionID == action.Snooze5m)
}

// snoozable returns blocks without their snooze buttons unless
// Config.Snooze is on: nothing would answer a click.
func (s *Slack) snoozable(blocks []slack.Block) []slack.Block {
	if s.cfg.Snooze {
		return blocks
	}
	out := blocks[:0:0]
	for _, b := range blocks {
		if sec, ok := b.(*slack.SectionBlock); ok && sec.Accessory != nil && snoozeButton(sec.Accessory.ButtonElement) {
			plain := *sec
			plain.Accessory = nil
			out = append(out, &plain)
			continue
		}
		a, ok := b.(*slack.ActionBlock)
		if !ok {
			out = append(out, b)
			continue
		}
		var keep []slack.BlockElement
		for _, el := range a.Elements.ElementSet {
			if btn, ok := el.(*slack.ButtonBlockElement); ok && snoozeButton(btn) {
				continue
			}
			keep = append(keep, el)
		}
		if len(keep) > 0 {
			out = append(out, slack.NewActionBlock(a.BlockID, keep...))
		}
	}
	return out
}

// SnoozeMessage renders the DM of a snooze (of) as it is posted at now:
// the reminder r of its meeting, as Message renders it, headed by a line
// saying the person asked for it and, when moved, that the meeting now
// starts at another time. Its buttons name the reminder first clicked.
func SnoozeMessage(r meetingbot.Reminder, of meetingbot.Snooze, moved bool, now time.Time, joinHosts ...string) (text string, blocks []slack.Block) {
	shownAs := r
	shownAs.Key = of.Reminder
	shownAs.Subscription.ID = of.Subscription
	if r.Meeting.Private && of.Meeting.Title != privateTitle {
		// The person clicked the reminder its owner got, which showed
		// the details: the DM, to the same person, shows what it showed
		// (r's meeting holds no more than that, see snooze.shownAs).
		shownAs.Meeting.Private = false
	}
	text, blocks = Message(shownAs, now, joinHosts...)
	note := ":alarm_clock: You asked me to remind you."
	if moved {
		note += " It moved: it now starts at " + dateToken(r.Meeting.Start, "{date_short_pretty} {time}", "2006-01-02 15:04 UTC") + "."
		text = fit(text, maxFallback-len(" (moved)")) + " (moved)"
	}
	head := slack.NewContextBlock("snooze_note", markdown(note))
	return text, append([]slack.Block{head}, blocks...)
}

// NotifySnooze DMs the snooze of as reminder r (its Subscription's
// Destination is the person, its Key the timer's) and returns where it
// landed; moved says the meeting starts at another time than when the
// person clicked. It posts as Notify does, with r's metadata, so that
// Delivered finds it again; its errors are Notify's.
func (s *Slack) NotifySnooze(ctx context.Context, r meetingbot.Reminder, of meetingbot.Snooze, moved bool) (meetingbot.Receipt, error) {
	dest, err := s.resolve(ctx, r.Subscription)
	if err != nil {
		return meetingbot.Receipt{}, fmt.Errorf("notify: snooze %q: %w", r.Key, err)
	}
	text, blocks := SnoozeMessage(r, of, moved, s.cfg.Now(), s.cfg.JoinHosts...)
	blocks = s.snoozable(blocks)
	receipt, err := s.post(ctx, dest, r, metadata(r), slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
	var se slack.SlackErrorResponse
	if errors.As(err, &se) && refusedContent[se.Err] && !errors.Is(err, meetingbot.ErrUnconfirmed) {
		receipt, err = s.post(ctx, dest, r, metadata(r), slack.MsgOptionText(plainText(r, s.cfg.Now(), s.cfg.JoinHosts), false))
	}
	if err != nil {
		return meetingbot.Receipt{}, fmt.Errorf("notify: snooze %q: %w", r.Key, s.explain("chat.postMessage", dest, err))
	}
	s.log.DebugContext(ctx, "snooze posted", "key", r.Key, "channel", receipt.Channel, "ts", receipt.TS)
	return receipt, nil
}
