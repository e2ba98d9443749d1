package notify

import (
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/meetingbot/meetingbot"
	"github.com/slack-go/slack"
)

// lateAfter is how far past its trigger time a reminder may go out and still
// say "in 10 minutes"; later than that (the bot was down, or retries took
// long) the headline names the start time instead of a wrong countdown.
const lateAfter = time.Minute

// Limits of what Slack takes, from Slack's Block Kit reference: a section's
// text holds at most 3,000 characters and a button's URL 3,000; beyond
// that Slack refuses the whole message (invalid_blocks). The text fallback is
// cut by Slack only at 40,000 characters, but it is what a notification
// shows, so it is held to a section's size. Fields are measured in bytes,
// which are never fewer than characters however Slack counts them, so a
// field within n bytes is within an n-character limit.
const (
	maxSectionText = 3000
	maxButtonURL   = 3000
	maxFallback    = 3000
)

// ellipsis ends a field that was cut.
const ellipsis = "…"

// Message renders the reminder r as it is posted at instant now: a plain
// text fallback, which is what push notifications show, and Block Kit
// blocks. Nothing from the event is trusted as markup: the title and the
// organizer are escaped wherever they appear, and only well-formed https
// links become buttons; another http(s) join link is shown as text. Times
// are <!date> tokens, so each reader sees their own zone; the fallbacks are
// in UTC.
//
// No event content makes the message one Slack refuses: after escaping, the
// title and the organizer are cut (never inside an entity, a <!date> token
// or a UTF-8 sequence, and marked with "…") so that every field fits its
// Block Kit limit, while what says when the meeting starts stays whole.
func Message(r meetingbot.Reminder, now time.Time) (text string, blocks []slack.Block) {
	m := r.Meeting
	title := escape(m.Title)
	if strings.TrimSpace(m.Title) == "" {
		title = "(No title)"
	}
	start := dateToken(m.Start, "{date_short_pretty} {time}", "2006-01-02 15:04 UTC")
	head := headline(r, now)

	tail := " " + head
	if !isLate(r, now) {
		tail += " (" + start + ")"
	}
	text = fit(title, maxFallback-len(tail)) + tail

	when := start
	if !m.End.IsZero() && m.End.After(m.Start) {
		when += " – " + dateToken(m.End, "{time}", "15:04 UTC")
	}
	details := "*When:* " + when
	if !buttonURL(m.JoinURL) && linkURL(m.JoinURL) {
		// Not a link Slack takes for a button, but one a reader can
		// follow: keep it, as text.
		if line := "\n*Join:* " + escape(m.JoinURL); len(details)+len(line) <= maxSectionText {
			details += line
		}
	}
	if m.Organizer != "" {
		const label = "\n*Organizer:* "
		if room := maxSectionText - len(details) - len(label); room > len(ellipsis) {
			details += label + fit(escape(m.Organizer), room)
		}
	}
	const open, close = ":calendar: *", "* "
	blocks = []slack.Block{
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType,
			open+fit(title, maxSectionText-len(open)-len(close)-len(head))+close+head, false, false), nil, nil, slack.SectionBlockOptionBlockID("reminder_headline")),
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, details, false, false), nil, nil, slack.SectionBlockOptionBlockID("reminder_details")),
	}
	var buttons []slack.BlockElement
	if buttonURL(m.JoinURL) {
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

// fit returns the escaped text s cut to at most n bytes, ending in "…" when
// it was cut; "" when not even that fits. It never cuts inside an entity
// (&amp;), a <…> token such as <!date^…> or a UTF-8 sequence, so what
// remains shows as it would have whole.
func fit(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n < len(ellipsis) {
		return ""
	}
	i := n - len(ellipsis)
	for {
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		j := i
		if k := strings.LastIndexByte(s[:j], '&'); k >= 0 && !strings.Contains(s[k:j], ";") {
			j = k
		}
		if k := strings.LastIndexByte(s[:j], '<'); k >= 0 && !strings.Contains(s[k:j], ">") {
			j = k
		}
		if j == i {
			return s[:i] + ellipsis
		}
		i = j
	}
}

// headline says how long until the meeting starts: from the offset while the
// reminder is on time, from the start instant once it is late.
func headline(r meetingbot.Reminder, now time.Time) string {
	if isLate(r, now) {
		return "starts at " + dateToken(r.Meeting.Start, "{time}", "15:04 UTC")
	}
	if r.Offset <= 0 {
		return "is starting now"
	}
	return "starts in " + humanDuration(r.Offset)
}

func isLate(r meetingbot.Reminder, now time.Time) bool {
	return r.Late || now.Sub(r.TriggerAt) > lateAfter
}

// humanDuration reads d aloud: "10 minutes", "30 seconds", "1 hour 30 minutes".
// Parts below a second are rounded up, so a positive duration never reads as
// nothing.
func humanDuration(d time.Duration) string {
	secs := int64((d + time.Second - 1) / time.Second)
	units := []struct {
		name string
		size int64
	}{{"day", 86400}, {"hour", 3600}, {"minute", 60}, {"second", 1}}
	var parts []string
	for _, u := range units {
		n := secs / u.size
		secs %= u.size
		switch {
		case n == 1:
			parts = append(parts, "1 "+u.name)
		case n > 1:
			parts = append(parts, fmt.Sprintf("%d %ss", n, u.name))
		}
	}
	if len(parts) == 0 {
		return "0 seconds"
	}
	return strings.Join(parts, " ")
}

// dateToken writes t so that Slack shows it in each reader's zone, with a
// UTC fallback for clients that cannot.
func dateToken(t time.Time, format, fallback string) string {
	return fmt.Sprintf("<!date^%d^%s|%s>", t.Unix(), format, t.UTC().Format(fallback))
}

// escape makes text inert in Slack markup: the three characters Slack
// parses as control sequences become entities, so "<!channel>" or
// "<https://x|y>" in a title shows as typed instead of pinging or linking.
func escape(text string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(text)
}

// buttonURL reports whether u may be a button's link: Slack refuses a
// message whose button URL is malformed or over-long (invalid_blocks), and
// anything but https has no business in a reminder's button. Only what
// Slack surely takes passes: https, a host, at most maxButtonURL bytes, no
// spaces, control or non-ASCII characters.
func buttonURL(u string) bool {
	return linkURL(u) && len(u) <= maxButtonURL && strings.HasPrefix(u, "https:")
}

// linkURL reports whether u is an absolute http(s) URL with a host and
// nothing a URL must percent-encode that could break out of it.
func linkURL(u string) bool {
	if u == "" || len(u) > maxSectionText {
		return false
	}
	for i := 0; i < len(u); i++ {
		if u[i] <= ' ' || u[i] >= 0x7f {
			return false
		}
	}
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "https" || p.Scheme == "http") && p.Host != "" && p.Opaque == ""
}

// EventType is the message metadata event type of every reminder. Its
// payload holds key, subscription, event_id, start (RFC 3339, UTC) and offset
// (meetingbot.FormatOffset), so the bot after a crash and the audit can find
// reminders in Slack.
const EventType = "meeting_reminder"

const (
	fieldKey          = "key"
	fieldSubscription = "subscription"
	fieldEventID      = "event_id"
	fieldStart        = "start"
	fieldOffset       = "offset"
)

func metadata(r meetingbot.Reminder) slack.SlackMetadata {
	return slack.SlackMetadata{EventType: EventType, EventPayload: map[string]any{
		fieldKey:          r.Key,
		fieldSubscription: r.Subscription.ID,
		fieldEventID:      r.Meeting.ID,
		fieldStart:        r.Meeting.Start.UTC().Format(time.RFC3339),
		fieldOffset:       meetingbot.FormatOffset(r.Offset),
	}}
}
