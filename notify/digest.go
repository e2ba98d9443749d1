package notify

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/slack-go/slack"
)

// MaxDigest is the most reminders one digest message lists
// (meetingbot.MaxDigest): each takes a block, and Slack takes at most 50
// blocks a message. A caller with more sends several digests.
const MaxDigest = meetingbot.MaxDigest

// fieldReminders is the digest's metadata payload field: one object per
// reminder, with key, event_id, start and offset as a reminder's payload
// has them.
const fieldReminders = "reminders"

// DigestMessage renders reminders due at one instant for one destination as
// one message, posted at instant now: a headline saying how many meetings
// start and when, then one line per meeting (its title, its start, and its
// Join link where Message would make a Join button, and while it has not
// started its "Remind me at start" button). The rules of Message hold for
// each meeting: private ones shown as such, event text inert and escaped,
// fields cut to Block Kit's limits. At most MaxDigest reminders are
// listed.
func DigestMessage(rs []meetingbot.Reminder, now time.Time, joinHosts ...string) (text string, blocks []slack.Block) {
	rs = rs[:min(len(rs), MaxDigest)]
	head := digestHeadline(rs, now)
	titles := make([]string, 0, len(rs))
	blocks = append(blocks, slack.NewSectionBlock(markdown(":calendar: *"+head+"*"), nil, nil, slack.SectionBlockOptionBlockID("digest_headline")))
	for i, r := range rs {
		m, title := shown(r)
		titles = append(titles, title)
		when := dateToken(m.Start, "{time}", "15:04 UTC")
		join := joinButton(m.JoinURL, joinHosts)
		var accessory *slack.Accessory
		suffix := ""
		// A line has room for one accessory, and Slack takes 50 blocks a
		// message, so a digest of MaxDigest lines cannot give each its own
		// actions block: while the meeting has not started the accessory
		// is "Remind me at start" (a digest's reminders carry it like any
		// other's) and Join becomes a link in the line. "In 5 min" has no
		// room: an overflow menu or a static select would hold both in one
		// accessory, but their options' values are at most 150 characters
		// (https://docs.slack.dev/reference/block-kit/composition-objects/option-object),
		// and a snooze's value names its subscription, its reminder's key
		// and its meeting (a recurring instance's key alone is some 70),
		// which a button's 2,000 hold and an option's 150 do not.
		if snooze := snoozeButtons(r, now); len(snooze) > 0 {
			accessory = slack.NewAccessory(snooze[0])
			if join && inlineLink(m.JoinURL) {
				suffix = " · <" + m.JoinURL + "|Join>"
			}
		} else if join {
			accessory = slack.NewAccessory(slack.NewButtonBlockElement("join", strconv.Itoa(i), slack.NewTextBlockObject(slack.PlainTextType, "Join", false, false)).
				WithURL(m.JoinURL))
		}
		// A digest's line says the person's answer to an invitation, in
		// a word, and offers no answer controls: its one accessory is
		// "Remind me at start", which meetings starting together need
		// most, and a menu per line beside it would take a block of its
		// own where 50 blocks hold 45 lines. The person answers from the
		// notice of the invitation (invites on) or from the calendar.
		if r.Meeting.Response != meetingbot.ResponseNone && toOwner(r.Subscription) {
			suffix = " · " + answerWord(r.Meeting.Response) + suffix
		}
		line := "*" + fit(title, maxSectionText-len(when)-len(suffix)-8) + "* · " + when + suffix
		blocks = append(blocks, slack.NewSectionBlock(markdown(line), nil, accessory, slack.SectionBlockOptionBlockID("digest_"+strconv.Itoa(i))))
	}
	text = fit(head+": "+strings.Join(titles, ", "), maxFallback)
	return text, blocks
}

// digestHeadline says how many meetings start and when: from the offset
// while on time, from the start once late, as headline does for one.
func digestHeadline(rs []meetingbot.Reminder, now time.Time) string {
	r, n := rs[0], len(rs)
	switch {
	case isLate(r, now):
		return fmt.Sprintf("%d meetings start at %s", n, dateToken(r.Meeting.Start, "{time}", "15:04 UTC"))
	case r.Offset <= 0:
		return fmt.Sprintf("%d meetings are starting now", n)
	}
	return fmt.Sprintf("%d meetings start in %s", n, humanDuration(r.Offset))
}

// NotifyDigest posts reminders of one subscription due at one instant as
// one message (DigestMessage) and returns its receipt, which stands for
// each of them. The message's metadata lists every reminder's key, so
// Delivered finds any of them in it, and Reminders reads it as one
// delivery per reminder. Posting, pacing, retries and the look before
// posting again are Notify's; so are the errors. It posts at most
// MaxDigest reminders and fails for none or for reminders of several
// subscriptions.
func (s *Slack) NotifyDigest(ctx context.Context, rs []meetingbot.Reminder) (meetingbot.Receipt, error) {
	if len(rs) == 0 || len(rs) > MaxDigest {
		return meetingbot.Receipt{}, fmt.Errorf("notify: a digest of %d reminders: want 1 to %d", len(rs), MaxDigest)
	}
	sub := rs[0].Subscription
	for _, r := range rs[1:] {
		if r.Subscription.ID != sub.ID {
			return meetingbot.Receipt{}, errors.New("notify: a digest of reminders of several subscriptions")
		}
	}
	dest, err := s.resolve(ctx, sub)
	if err != nil {
		return meetingbot.Receipt{}, fmt.Errorf("notify: subscription %q: %w", sub.ID, err)
	}
	text, blocks := DigestMessage(rs, s.cfg.Now(), s.cfg.JoinHosts...)
	blocks = s.snoozable(blocks)
	receipt, err := s.post(ctx, dest, rs[0], digestMetadata(rs), slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
	var se slack.SlackErrorResponse
	if errors.As(err, &se) && refusedContent[se.Err] && !errors.Is(err, meetingbot.ErrUnconfirmed) {
		s.log.DebugContext(ctx, "digest blocks refused; posting it as text", "subscription", sub.ID, "err", err)
		receipt, err = s.post(ctx, dest, rs[0], digestMetadata(rs), slack.MsgOptionText(text, false))
	}
	if err != nil {
		return meetingbot.Receipt{}, fmt.Errorf("notify: subscription %q: %w", sub.ID, s.explain("chat.postMessage", dest, err))
	}
	s.log.DebugContext(ctx, "digest posted", "subscription", sub.ID, "reminders", len(rs), "channel", receipt.Channel, "ts", receipt.TS)
	return receipt, nil
}

// digestMetadata is a digest's metadata: the first reminder's payload, as
// Notify's, and every reminder's under fieldReminders.
func digestMetadata(rs []meetingbot.Reminder) slack.SlackMetadata {
	md := metadata(rs[0])
	list := make([]map[string]any, len(rs))
	for i, r := range rs {
		list[i] = map[string]any{
			fieldKey:     r.Key,
			fieldEventID: r.Meeting.ID,
			fieldStart:   r.Meeting.Start.UTC().Format(time.RFC3339),
			fieldOffset:  meetingbot.FormatOffset(r.Offset),
		}
	}
	md.EventPayload[fieldReminders] = list
	return md
}

// listed returns the reminders a message's metadata lists: its own
// payload, and for a digest each of fieldReminders.
func listed(m slack.Message) []map[string]any {
	out := []map[string]any{m.Metadata.EventPayload}
	list, _ := m.Metadata.EventPayload[fieldReminders].([]any)
	for _, item := range list {
		if p, ok := item.(map[string]any); ok {
			out = append(out, p)
		}
	}
	return out
}

// inlineLink reports whether a join URL can stand in mrkdwn's <url|text>
// as it is: nothing in it ends the link or starts its text.
func inlineLink(u string) bool {
	return !strings.ContainsAny(u, "<>|")
}
