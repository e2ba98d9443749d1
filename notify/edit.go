package notify

import (
	"context"
	"errors"
	"fmt"
	"html"
	"strings"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify/action"
)

// EditedMessage renders the message of f's reminder as an edit leaves it.
//
// A meeting moved or cancelled keeps what the reminder was about (its
// title, what it said then: "starts in 10 minutes"), strikes what is no
// longer true (that phrase and the time it named) and says what happened:
// "Moved to <new time>", with ", a new reminder will follow" when one will
// (f.Follows), "Cancelled", or "You declined" when the calendar's owner
// declined it (EditDeclined: not "Cancelled", for the meeting goes on
// without them; in a channel, "Declined by the calendar's owner"). A
// moved meeting keeps its Join and Open in Calendar buttons; a cancelled
// one has none; a declined one in its owner's DM keeps the answer
// buttons. EditRestored renders the reminder as Message did when it was
// sent (at f.SentAt).
//
// Event text follows Message's rules: inert, escaped, Slack told to show it
// verbatim, a private meeting shown as "Private meeting" except in a DM to
// its owner; times are <!date> tokens with UTC fallbacks; every field fits
// its Block Kit limit, the title cut first.
func EditedMessage(f meetingbot.Follow, joinHosts ...string) (text string, blocks []slack.Block) {
	if !f.Kind.Changed() {
		return Message(f.Reminder, f.SentAt, joinHosts...)
	}
	r := f.Reminder
	m, title := shown(r)
	was := headline(r, f.SentAt)
	note, plain := changeNote(f)
	text = editedText(title, r, plain, maxFallback)

	details := "*When:* ~" + dateToken(m.Start, "{date_short_pretty} {time}", "2006-01-02 15:04 UTC") + "~"
	if note != "" {
		details += "\n" + note
	}
	if organizer := escape(inert(m.Organizer)); organizer != "" && f.Kind == meetingbot.EditMoved {
		const label = "\n*Organizer:* "
		if room := maxSectionText - len(details) - len(label); room > len(ellipsis) {
			details += label + fit(organizer, room)
		}
	}
	const open, mid, end = ":calendar: *", "* ~", "~"
	blocks = []slack.Block{
		slack.NewSectionBlock(markdown(open+fit(title, maxSectionText-len(open)-len(mid)-len(was)-len(end))+mid+was+end),
			nil, nil, slack.SectionBlockOptionBlockID("reminder_headline")),
		slack.NewSectionBlock(markdown(details), nil, nil, slack.SectionBlockOptionBlockID("reminder_details")),
	}
	if f.Kind == meetingbot.EditDeclined && toOwner(r.Subscription) {
		// Not going: nothing to join; the answer stays on the message,
		// with its buttons, so that the person may change their mind
		// (the meeting then comes back, and the message is restored).
		return text, append(blocks, answerBlocks(action.RSVP{Calendar: r.Subscription.CalendarID, Event: r.Meeting.ID}, meetingbot.ResponseDeclined)...)
	}
	if f.Kind != meetingbot.EditMoved {
		return text, blocks // nothing to join or open any more
	}
	var buttons []slack.BlockElement
	if joinButton(m.JoinURL, joinHosts) {
		buttons = append(buttons, slack.NewButtonBlockElement("join", "", slack.NewTextBlockObject(slack.PlainTextType, "Join", false, false)).
			WithURL(m.JoinURL).WithStyle(slack.StylePrimary))
	}
	if buttonURL(m.HTMLLink) {
		buttons = append(buttons, slack.NewButtonBlockElement("open_event", "", slack.NewTextBlockObject(slack.PlainTextType, "Open in Calendar", false, false)).
			WithURL(m.HTMLLink))
	}
	if len(buttons) > 0 {
		blocks = append(blocks, slack.NewActionBlock("reminder_actions", buttons...))
	}
	return text, blocks
}

// changeNote says what became of f's meeting, in mrkdwn for the details
// block and in plain words for the text.
func changeNote(f meetingbot.Follow) (note, plain string) {
	switch f.Kind {
	case meetingbot.EditCancelled:
		return "*Cancelled*", "Cancelled"
	case meetingbot.EditDeclined:
		if toOwner(f.Reminder.Subscription) {
			return "", "You declined" // the answer line says it (answerBlocks)
		}
		// In a channel, "you" would be whoever reads it.
		return "*Declined* by the calendar's owner", "Declined by the calendar's owner"
	}
	to := dateToken(f.MovedTo, "{date_short_pretty} {time}", "2006-01-02 15:04 UTC")
	plain = "Moved to " + to
	if f.Follows {
		plain += ", a new reminder will follow"
	}
	return "*Moved to " + to + "*" + strings.TrimPrefix(plain, "Moved to "+to), plain
}

// editedText is the text of an edited message, at most n bytes: the title
// (cut to fit), what happened, and the time the reminder named.
func editedText(title string, r meetingbot.Reminder, plain string, n int) string {
	tail := ": " + plain + " (was " + dateToken(r.Meeting.Start, "{date_short_pretty} {time}", "2006-01-02 15:04 UTC") + ")"
	return fit(title, n-len(tail)) + tail
}

// plainEdited renders f as one line of text, for when Slack refuses the
// blocks of EditedMessage, with the same rules.
func plainEdited(f meetingbot.Follow, joinHosts []string) string {
	if !f.Kind.Changed() {
		return plainText(f.Reminder, f.SentAt, joinHosts)
	}
	_, title := shown(f.Reminder)
	_, plain := changeNote(f)
	return editedText(fit(title, maxPlainTitle), f.Reminder, plain, maxFallback)
}

// unknownTitle stands for the title of a meeting whose reminder cannot be
// read back.
const unknownTitle = "A meeting"

// Edit rewrites the reminder message at f.Message with chat.update to say
// what became of its meeting (see EditedMessage). An edit sets the
// message's whole content, so making it twice shows nothing twice; its
// metadata stays, so Delivered and the audit still find it.
//
// When f does not know the meeting's title (a meeting the calendar no
// longer shows), Edit reads the message back from the channel's history
// for it, so that the edit keeps what the reminder was about.
//
// Rate limits are waited out and 5xx and network errors retried, as for
// Notify; blocks Slack refuses are replaced by one line of text. An error
// that no retry cures (the message deleted: message_not_found; Slack
// refusing edits of it: cant_update_message, edit_window_closed; its
// channel archived or gone: is_inactive, channel_not_found; a bad token)
// is permanent (meetingbot.IsPermanent); any other may pass.
func (s *Slack) Edit(ctx context.Context, f meetingbot.Follow) error {
	wrap := func(err error) error {
		return fmt.Errorf("notify: subscription %q: edit %s: %w", f.Reminder.Subscription.ID, f.Reminder.Key, err)
	}
	if f.Message.Channel == "" || f.Message.TS == "" {
		return wrap(meetingbot.Permanent(errors.New("no message to edit: the ledger has no channel and ts for it")))
	}
	dest := destination{channel: f.Message.Channel}
	if f.Reminder.Meeting.Title == "" {
		title, err := s.recall(ctx, f.Message)
		if err != nil {
			return wrap(s.explain("conversations.history", dest, err))
		}
		f.Reminder.Meeting.Title = title
	}
	text, blocks := EditedMessage(f, s.cfg.JoinHosts...)
	blocks = s.answerable(ctx, f.Reminder.Subscription.CalendarID, s.snoozable(blocks))
	err := s.update(ctx, f.Message, slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
	var se slack.SlackErrorResponse
	if errors.As(err, &se) && refusedContent[se.Err] {
		s.log.DebugContext(ctx, "blocks refused; editing the reminder as text", "subscription", f.Reminder.Subscription.ID, "key", f.Reminder.Key, "err", err)
		err = s.update(ctx, f.Message, slack.MsgOptionText(plainEdited(f, s.cfg.JoinHosts), false), slack.MsgOptionBlocks())
	}
	if err != nil {
		return wrap(s.explain("chat.update", dest, err))
	}
	s.log.DebugContext(ctx, "reminder edited", "subscription", f.Reminder.Subscription.ID, "key", f.Reminder.Key,
		"edit", f.Kind, "channel", f.Message.Channel, "ts", f.Message.TS)
	return nil
}

// update makes the chat.update call of Edit with content, and returns its
// error, unexplained. The message's metadata is left as posted.
func (s *Slack) update(ctx context.Context, at meetingbot.Receipt, content ...slack.MsgOption) error {
	return s.call(ctx, "chat.update", policy{}, func(ctx context.Context) error {
		_, _, _, err := s.api.UpdateMessageContext(ctx, at.Channel, at.TS, content...)
		return err
	})
}

// errMessageGone says that a message is not in its channel's history: it
// was deleted.
var errMessageGone = errors.New("message_not_found: the reminder is no longer in the channel's history (deleted)")

// recall returns the title, unescaped, that the reminder message at
// at shows: from its headline, or from its text when it was posted as
// text alone. A message that is not there is a permanent error; when
// history cannot be read for good (a missing scope), or the message does
// not read as a reminder, the title is unknownTitle.
func (s *Slack) recall(ctx context.Context, at meetingbot.Receipt) (string, error) {
	ts := parseTS(at.TS)
	var found *slack.Message
	_, err := s.history(ctx, at.Channel, ts, ts, 1, 0, func(m slack.Message) bool {
		if m.Timestamp == at.TS {
			found = &m
			return false
		}
		return true
	})
	switch {
	case err != nil && meetingbot.IsPermanent(s.explain("conversations.history", destination{channel: at.Channel}, err)):
		s.log.DebugContext(ctx, "reminder message unreadable; edited without its title", "channel", at.Channel, "ts", at.TS, "err", err)
		return unknownTitle, nil
	case err != nil:
		return "", err
	case found == nil:
		return "", meetingbot.Permanent(errMessageGone)
	}
	if title := titleOf(*found); title != "" {
		return title, nil
	}
	return unknownTitle, nil
}

// titleOf reads the title back from a reminder message: the bold text that
// opens its headline block, or what precedes how long until the meeting in
// its text. The title was made inert before it was escaped, so it holds no
// "* " that would end the bold early.
func titleOf(m slack.Message) string {
	for _, b := range m.Blocks.BlockSet {
		sec, ok := b.(*slack.SectionBlock)
		if !ok || sec.BlockID != "reminder_headline" || sec.Text == nil {
			continue
		}
		rest, ok := strings.CutPrefix(sec.Text.Text, ":calendar: *")
		if title, _, ok2 := strings.Cut(rest, "* "); ok && ok2 {
			return html.UnescapeString(title)
		}
	}
	for _, head := range []string{" starts in ", " starts at ", " is starting now"} {
		if i := strings.LastIndex(m.Text, head); i > 0 {
			return html.UnescapeString(m.Text[:i])
		}
	}
	return ""
}
