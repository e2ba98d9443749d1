package notify

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify/action"
	"github.com/slack-go/slack"
)

// Invitation notices (/meetingbot invites on): a DM of each new
// invitation, "Bob invited you: Planning, Tue 10:00–10:30", with the
// answer buttons and a link to the event; many found at once are one
// digest, with an answer menu per line.

// maxOrganizer bounds the organizer's name in a notice.
const maxOrganizer = 200

// organizerOf is who invited: the organizer's name (or email), inert and
// escaped, or "Someone" when the event names nobody.
func organizerOf(m meetingbot.Meeting) string {
	if o := escape(inert(m.Organizer)); o != "" {
		return fit(o, maxOrganizer)
	}
	return "Someone"
}

// noticeWhen is a notice's time of the meeting: its start and end as
// <!date> tokens, each reader seeing their own zone.
func noticeWhen(m meetingbot.Meeting) string {
	when := dateToken(m.Start, "{date_short_pretty} {time}", "2006-01-02 15:04 UTC")
	if m.End.After(m.Start) {
		when += "–" + dateToken(m.End, "{time}", "15:04 UTC")
	}
	return when
}

// InviteMessage renders the notice of one invitation: a headline ("Bob
// invited you: Planning"), when (start and end as <!date> tokens; for a
// series, its next occurrence, and that the answer holds for every one),
// the line saying the person's answer, and Going / Maybe / No beside
// "Open in Calendar". The notice goes to the person invited, the
// calendar's owner, so a private meeting shows its title; event text is
// made inert and escaped, and every field cut to Block Kit's limits, as
// in Message.
func InviteMessage(inv meetingbot.Invitation) (text string, blocks []slack.Block) {
	m := inv.Meeting
	title := escape(inert(m.Title))
	if title == "" {
		title = "(No title)"
	}
	who, when := organizerOf(m), noticeWhen(m)
	text = fit(who+" invited you: "+fit(title, maxPlainTitle)+", "+when, maxFallback)
	const open, mid = ":envelope_with_arrow: *", "* invited you: *"
	head := open + who + mid + fit(title, maxSectionText-len(open)-len(who)-len(mid)-1) + "*"
	details := "*When:* " + when
	if inv.Series {
		details += "\n*Repeats:* your answer holds for every occurrence."
	}
	blocks = []slack.Block{
		slack.NewSectionBlock(markdown(head), nil, nil, slack.SectionBlockOptionBlockID("invite_headline")),
		slack.NewSectionBlock(markdown(details), nil, nil, slack.SectionBlockOptionBlockID("invite_details")),
	}
	answer := answerBlocks(action.RSVP{Calendar: inv.Calendar, Event: inv.Event}, responseOf(m))
	if buttonURL(m.HTMLLink) {
		link := slack.NewButtonBlockElement("open_event", "", slack.NewTextBlockObject(slack.PlainTextType, "Open in Calendar", false, false)).WithURL(m.HTMLLink)
		if len(answer) == 2 {
			a := answer[1].(*slack.ActionBlock)
			a.Elements.ElementSet = append(a.Elements.ElementSet, link)
		} else {
			answer = append(answer, slack.NewActionBlock("invite_actions", link))
		}
	}
	return text, append(blocks, answer...)
}

// responseOf is the answer a notice shows: the meeting's, or not answered.
func responseOf(m meetingbot.Meeting) meetingbot.Response {
	if m.Response == meetingbot.ResponseNone {
		return meetingbot.ResponseNeedsAction
	}
	return m.Response
}

// MaxInviteDigest is the most invitations one digest lists: a headline
// and a line each, within Slack's 50 blocks a message. A caller with more
// sends several digests.
const MaxInviteDigest = meetingbot.MaxDigest

// InviteDigestMessage renders invitations found together as one message:
// a headline saying how many, then a line each (the title, linked to the
// event; when; who invited; "repeats" for a series) with an answer menu
// (action action.RSVPMenu, options Going, Maybe, No whose
// values are action.RSVPOption), the one accessory a line has. A line
// whose event's ID cannot fit an option's 150 characters has no menu.
// The rules of InviteMessage hold for each line. At most MaxInviteDigest
// are listed.
func InviteDigestMessage(invs []meetingbot.Invitation) (text string, blocks []slack.Block) {
	invs = invs[:min(len(invs), MaxInviteDigest)]
	head := fmt.Sprintf("%d new invitations", len(invs))
	blocks = append(blocks, slack.NewSectionBlock(markdown(":envelope_with_arrow: *"+head+"*"), nil, nil, slack.SectionBlockOptionBlockID("invite_digest_headline")))
	titles := make([]string, 0, len(invs))
	for i, inv := range invs {
		m := inv.Meeting
		title := escape(inert(m.Title))
		if title == "" {
			title = "(No title)"
		}
		titles = append(titles, title)
		tail := " · " + noticeWhen(m) + " · from " + fit(organizerOf(m), 100)
		if inv.Series {
			tail += " · repeats"
		}
		link := buttonURL(m.HTMLLink) && inlineLink(m.HTMLLink)
		room := maxSectionText - len(tail) - 4
		if link {
			room -= len(m.HTMLLink) + 3
		}
		// A title in a link's text ends the link at its first "|" or ">";
		// escaped, it holds no ">", and the link names its own end first.
		name := "*" + fit(title, room) + "*"
		if link {
			name = "<" + m.HTMLLink + "|" + fit(title, room) + ">"
			name = "*" + name + "*"
		}
		var accessory *slack.Accessory
		if menu := answerMenu(inv.Event, responseOf(m)); menu != nil {
			accessory = slack.NewAccessory(menu)
		}
		blocks = append(blocks, slack.NewSectionBlock(markdown(name+tail), nil, accessory, slack.SectionBlockOptionBlockID("invite_"+strconv.Itoa(i))))
	}
	text = fit(head+": "+strings.Join(titles, ", "), maxFallback)
	return text, blocks
}

// answerMenu is a digest line's answer menu for event, showing answer r
// when it is one; nil when an option's value cannot hold event.
func answerMenu(event string, r meetingbot.Response) *slack.SelectBlockElement {
	var opts []*slack.OptionBlockObject
	var initial *slack.OptionBlockObject
	for _, b := range answerLabels {
		v := action.RSVPOption(event, b.r)
		if v == "" {
			return nil
		}
		o := slack.NewOptionBlockObject(v, slack.NewTextBlockObject(slack.PlainTextType, b.label, false, false), nil)
		opts = append(opts, o)
		if b.r == r {
			initial = o
		}
	}
	menu := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, slack.NewTextBlockObject(slack.PlainTextType, "Answer", false, false), action.RSVPMenu, opts...)
	menu.InitialOption = initial
	return menu
}

// NotifyInvite DMs the notice of inv to inv.User and returns where it
// landed. It posts as Notify does, with the notice's metadata (its key,
// its pseudo-subscription meetingbot.InviteSubscription, the event), so
// that Delivered finds it again after a crash and the audit lists it;
// its errors are Notify's.
func (s *Slack) NotifyInvite(ctx context.Context, inv meetingbot.Invitation) (meetingbot.Receipt, error) {
	r := inv.Reminder()
	dest, err := s.resolve(ctx, r.Subscription)
	if err != nil {
		return meetingbot.Receipt{}, fmt.Errorf("notify: notice %q: %w", inv.Key, err)
	}
	text, blocks := InviteMessage(inv)
	receipt, err := s.post(ctx, dest, r, metadata(r), slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
	var se slack.SlackErrorResponse
	if errors.As(err, &se) && refusedContent[se.Err] && !errors.Is(err, meetingbot.ErrUnconfirmed) {
		s.log.DebugContext(ctx, "notice blocks refused; posting it as text", "key", inv.Key, "err", err)
		receipt, err = s.post(ctx, dest, r, metadata(r), slack.MsgOptionText(text, false))
	}
	if err != nil {
		return meetingbot.Receipt{}, fmt.Errorf("notify: notice %q: %w", inv.Key, s.explain("chat.postMessage", dest, err))
	}
	s.log.DebugContext(ctx, "notice posted", "key", inv.Key, "channel", receipt.Channel, "ts", receipt.TS)
	return receipt, nil
}

// NotifyInviteDigest DMs invitations of one person found together as one
// message (InviteDigestMessage) and returns its receipt, which stands
// for each. Its metadata lists every notice's key, so that Delivered
// finds any of them in it. It posts at most MaxInviteDigest and fails
// for none or for several people's; its errors are Notify's.
func (s *Slack) NotifyInviteDigest(ctx context.Context, invs []meetingbot.Invitation) (meetingbot.Receipt, error) {
	if len(invs) == 0 || len(invs) > MaxInviteDigest {
		return meetingbot.Receipt{}, fmt.Errorf("notify: a digest of %d notices: want 1 to %d", len(invs), MaxInviteDigest)
	}
	rs := make([]meetingbot.Reminder, len(invs))
	for i, inv := range invs {
		if inv.User != invs[0].User {
			return meetingbot.Receipt{}, errors.New("notify: a digest of several people's notices")
		}
		rs[i] = inv.Reminder()
	}
	sub := rs[0].Subscription
	dest, err := s.resolve(ctx, sub)
	if err != nil {
		return meetingbot.Receipt{}, fmt.Errorf("notify: notices of %s: %w", invs[0].User, err)
	}
	text, blocks := InviteDigestMessage(invs)
	receipt, err := s.post(ctx, dest, rs[0], digestMetadata(rs), slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
	var se slack.SlackErrorResponse
	if errors.As(err, &se) && refusedContent[se.Err] && !errors.Is(err, meetingbot.ErrUnconfirmed) {
		s.log.DebugContext(ctx, "notice digest blocks refused; posting it as text", "user", invs[0].User, "err", err)
		receipt, err = s.post(ctx, dest, rs[0], digestMetadata(rs), slack.MsgOptionText(text, false))
	}
	if err != nil {
		return meetingbot.Receipt{}, fmt.Errorf("notify: notices of %s: %w", invs[0].User, s.explain("chat.postMessage", dest, err))
	}
	s.log.DebugContext(ctx, "notice digest posted", "user", invs[0].User, "notices", len(invs), "channel", receipt.Channel, "ts", receipt.TS)
	return receipt, nil
}
