package notify

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/meetingbot/meetingbot"
	"github.com/slack-go/slack"
)

// Change notices ("/meetingbot subscribe <calendar> changes"): a channel
// told what changed in the calendar it follows, one line a change:
//
//	🆕 Review added: Tue 2 Dec 10:00–11:00 · Room 1 · by @bob
//	➡️ Standup moved: Tue 09:30–09:45, was Tue 09:00–09:15
//	❌ Review cancelled: was Tue 10:00–11:00
//	✏️ Daily standup, renamed from Standup
//	📍 Daily standup now in Room 2, was Room 1
//
// Many found together are one digest: a headline and a line each. A
// private event is "Private meeting" and its time, as in a channel's
// reminder: no title, place, link or person.

// maxFeedDigest is the most changes a digest lists one by one, a block
// each, within Slack's 50 blocks; the rest are counted in one line.
const maxFeedDigest = 40

// maxPlace bounds a location in a notice.
const maxPlace = 300

// FeedMessage renders one change notice; who is the person the notice
// names (a Slack mention, or a display name; "" for none), already
// escaped. Event text is made inert and escaped, each field cut to Block
// Kit's limits, times are <!date> tokens each reader sees in their zone.
func FeedMessage(n meetingbot.Notice, who string) (text string, blocks []slack.Block) {
	line := feedLine(n, who)
	// The notification: the line without its icon and bold, the times
	// still tokens, as a reminder's.
	if _, rest, ok := strings.Cut(line, ": "); ok && strings.HasPrefix(line, ":") {
		line = rest
	}
	text = fit(strings.ReplaceAll(line, "*", ""), maxFallback)
	line = feedLine(n, who)
	blocks = []slack.Block{slack.NewSectionBlock(markdown(fit(line, maxSectionText)), nil, nil, slack.SectionBlockOptionBlockID("feed_change"))}
	if m := n.Meeting(); !m.Private && n.Now.ID != "" && buttonURL(m.HTMLLink) {
		link := slack.NewButtonBlockElement("open_event", "", slack.NewTextBlockObject(slack.PlainTextType, "Open in Calendar", false, false)).WithURL(m.HTMLLink)
		blocks = append(blocks, slack.NewActionBlock("feed_actions", link))
	}
	return text, blocks
}

// FeedDigestMessage renders changes found together as one message: a
// headline saying how many, a line each (as FeedMessage's, without the
// person), and past maxFeedDigest how many more.
func FeedDigestMessage(ns []meetingbot.Notice) (text string, blocks []slack.Block) {
	head := fmt.Sprintf("%d changes to the calendar %s", len(ns), escape(inert(ns[0].Subscription.CalendarID)))
	blocks = append(blocks, slack.NewSectionBlock(markdown(":calendar: *"+head+"*"), nil, nil, slack.SectionBlockOptionBlockID("feed_digest_headline")))
	counts := map[meetingbot.Change]int{}
	for i, n := range ns {
		counts[n.Changes[0]]++
		if i < maxFeedDigest {
			blocks = append(blocks, slack.NewSectionBlock(markdown(fit(feedLine(n, ""), maxSectionText)), nil, nil, slack.SectionBlockOptionBlockID("feed_"+strconv.Itoa(i))))
		}
	}
	if more := len(ns) - maxFeedDigest; more > 0 {
		blocks = append(blocks, slack.NewContextBlock("feed_more", markdown(fmt.Sprintf("…and %s more.", plural(more, "change", "changes")))))
	}
	var parts []string
	for _, c := range []meetingbot.Change{meetingbot.ChangeAdded, meetingbot.ChangeMoved, meetingbot.ChangeCancelled, meetingbot.ChangeRenamed, meetingbot.ChangePlaced} {
		if counts[c] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[c], c))
		}
	}
	text = fit(head+": "+strings.Join(parts, ", "), maxFallback)
	return text, blocks
}

// feedTitle is how a notice names its event: its title, inert and
// escaped, or "Private meeting".
func feedTitle(m meetingbot.Meeting) string {
	if m.Private {
		return privateTitle
	}
	t := escape(inert(m.Title))
	if t == "" {
		t = "(No title)"
	}
	return fit(t, maxPlainTitle)
}

// feedLine is one change as a line of a notice.
func feedLine(n meetingbot.Notice, who string) string {
	was, now := n.Was, n.Now
	m := n.Meeting()
	title := "*" + feedTitle(m) + "*"
	place := func(m meetingbot.Meeting) string {
		if m.Private || m.Location == "" {
			return ""
		}
		return fit(escape(inert(m.Location)), maxPlace)
	}
	var line string
	switch {
	case n.Has(meetingbot.ChangeAdded):
		line = ":new: " + title + " added: " + noticeWhen(now)
		if p := place(now); p != "" {
			line += " · " + p
		}
	case n.Has(meetingbot.ChangeCancelled):
		line = ":x: " + title + " cancelled: was " + noticeWhen(was)
	default:
		var parts []string
		if n.Has(meetingbot.ChangeMoved) {
			parts = append(parts, "moved to "+noticeWhen(now)+", was "+noticeWhen(was))
		}
		if n.Has(meetingbot.ChangeRenamed) {
			parts = append(parts, "renamed from "+feedTitle(was))
		}
		if n.Has(meetingbot.ChangePlaced) {
			switch p, q := place(now), place(was); {
			case p == "":
				parts = append(parts, "no longer in "+q)
			case q == "":
				parts = append(parts, "now in "+p)
			default:
				parts = append(parts, "now in "+p+", was "+q)
			}
		}
		icon := ":arrow_right:"
		if !n.Has(meetingbot.ChangeMoved) {
			icon = ":pencil2:"
		}
		line = icon + " " + title + " " + strings.Join(parts, "; ")
	}
	if who != "" && !m.Private {
		verb := "by"
		if meetingbot.ResourceCalendar(n.Subscription.CalendarID) {
			verb = "booked by"
		}
		line += " · " + verb + " " + who
	}
	return line
}

// who is the person a notice of m names: the Slack user whose email is
// m's creator's (a mention, which shows each reader a name they may see
// already), else the creator's display name; never an email. One lookup,
// not retried: a notice does not wait for a name.
func (s *Slack) who(ctx context.Context, m meetingbot.Meeting) string {
	if m.Private {
		return ""
	}
	if m.CreatorEmail != "" {
		var user *slack.User
		err := s.call(ctx, "users.lookupByEmail", policy{attempts: 1}, func(ctx context.Context) error {
			var err error
			user, err = s.api.GetUserByEmailContext(ctx, m.CreatorEmail)
			return err
		})
		if err == nil && user != nil && isID(user.ID, "UW") {
			return "<@" + user.ID + ">"
		}
	}
	if m.Creator != "" && !strings.Contains(m.Creator, "@") {
		return fit(escape(inert(m.Creator)), maxOrganizer)
	}
	return ""
}

// NotifyChange posts one change notice in its channel and returns where
// it landed. It posts as Notify does, with the notice's metadata (its
// key, its pseudo-subscription meetingbot.FeedSubscription, the event),
// so that Delivered finds it again after a crash and the audit lists it;
// its errors are Notify's.
func (s *Slack) NotifyChange(ctx context.Context, n meetingbot.Notice) (meetingbot.Receipt, error) {
	r := n.Reminder()
	dest, err := s.resolve(ctx, r.Subscription)
	if err != nil {
		return meetingbot.Receipt{}, fmt.Errorf("notify: change notice %q: %w", n.Key, err)
	}
	text, blocks := FeedMessage(n, s.who(ctx, n.Meeting()))
	return s.postNotice(ctx, dest, r, metadata(r), text, blocks, "change notice "+n.Key)
}

// NotifyChanges posts changes of one channel found together as one
// digest (FeedDigestMessage) and returns its receipt, which stands for
// each. Its metadata lists every notice's key, so that Delivered finds
// any of them in it. It fails for none or for several channels'; its
// errors are Notify's.
func (s *Slack) NotifyChanges(ctx context.Context, ns []meetingbot.Notice) (meetingbot.Receipt, error) {
	if len(ns) == 0 {
		return meetingbot.Receipt{}, errors.New("notify: a digest of no changes")
	}
	rs := make([]meetingbot.Reminder, len(ns))
	for i, n := range ns {
		if n.Subscription.ID != ns[0].Subscription.ID {
			return meetingbot.Receipt{}, errors.New("notify: a digest of several channels' changes")
		}
		rs[i] = n.Reminder()
	}
	dest, err := s.resolve(ctx, rs[0].Subscription)
	if err != nil {
		return meetingbot.Receipt{}, fmt.Errorf("notify: changes of %s: %w", ns[0].Subscription.ID, err)
	}
	text, blocks := FeedDigestMessage(ns)
	return s.postNotice(ctx, dest, rs[0], digestMetadata(rs), text, blocks, "changes of "+ns[0].Subscription.ID)
}

// postNotice posts a notice's text and blocks, or its text alone when
// Slack refuses the blocks.
func (s *Slack) postNotice(ctx context.Context, dest destination, r meetingbot.Reminder, md slack.SlackMetadata, text string, blocks []slack.Block, what string) (meetingbot.Receipt, error) {
	receipt, err := s.post(ctx, dest, r, md, slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
	var se slack.SlackErrorResponse
	if errors.As(err, &se) && refusedContent[se.Err] && !errors.Is(err, meetingbot.ErrUnconfirmed) {
		s.log.DebugContext(ctx, "notice blocks refused; posting it as text", "key", r.Key, "err", err)
		receipt, err = s.post(ctx, dest, r, md, slack.MsgOptionText(text, false))
	}
	if err != nil {
		s.forgetStaleName(ctx, dest, err)
		return meetingbot.Receipt{}, fmt.Errorf("notify: %s: %w", what, s.explain("chat.postMessage", dest, err))
	}
	s.log.DebugContext(ctx, "notice posted", "key", r.Key, "channel", receipt.Channel, "ts", receipt.TS)
	return receipt, nil
}
