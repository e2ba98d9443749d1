package notify

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot/scheduler"
)

// lateAfter is how far past its trigger time a reminder may go out and still
// say "in 10 minutes"; later than that (the bot was down, or retries took
// long) the headline names the start time instead of a wrong countdown.
const lateAfter = time.Minute

// Message renders the reminder r as it is posted at instant now: a plain
// text fallback, which is what push notifications show, and Block Kit
// blocks. Nothing from the event is trusted as markup: the title and the
// organizer are escaped wherever they appear, and only http(s) links become
// buttons. Times are <!date> tokens, so each reader sees their own zone; the
// fallbacks are in UTC.
func Message(r scheduler.Reminder, now time.Time) (text string, blocks []slack.Block) {
	m := r.Meeting
	title := escape(m.Title)
	if strings.TrimSpace(m.Title) == "" {
		title = "(No title)"
	}
	start := dateToken(m.Start, "{date_short_pretty} {time}", "2006-01-02 15:04 UTC")
	head := headline(r, now)

	text = title + " " + head
	if !isLate(r, now) {
		text += " (" + start + ")"
	}

	when := start
	if !m.End.IsZero() && m.End.After(m.Start) {
		when += " – " + dateToken(m.End, "{time}", "15:04 UTC")
	}
	details := "*When:* " + when
	if m.Organizer != "" {
		details += "\n*Organizer:* " + escape(m.Organizer)
	}
	blocks = []slack.Block{
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType,
			fmt.Sprintf(":calendar: *%s* %s", title, head), false, false), nil, nil, slack.SectionBlockOptionBlockID("reminder_headline")),
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, details, false, false), nil, nil, slack.SectionBlockOptionBlockID("reminder_details")),
	}
	var buttons []slack.BlockElement
	if safeURL(m.JoinURL) {
		buttons = append(buttons, slack.NewButtonBlockElement("join", "", slack.NewTextBlockObject(slack.PlainTextType, "Join", false, false)).
			WithURL(m.JoinURL).WithStyle(slack.StylePrimary))
	}
	if safeURL(m.HTMLLink) {
		buttons = append(buttons, slack.NewButtonBlockElement("open_event", "", slack.NewTextBlockObject(slack.PlainTextType, "Open in Calendar", false, false)).
			WithURL(m.HTMLLink))
	}
	if len(buttons) > 0 {
		blocks = append(blocks, slack.NewActionBlock("reminder_actions", buttons...))
	}
	return text, blocks
}

// headline says how long until the meeting starts: from the offset while the
// reminder is on time, from the start instant once it is late.
func headline(r scheduler.Reminder, now time.Time) string {
	if isLate(r, now) {
		return "starts at " + dateToken(r.Meeting.Start, "{time}", "15:04 UTC")
	}
	if r.Offset <= 0 {
		return "is starting now"
	}
	return "starts in " + humanDuration(r.Offset)
}

func isLate(r scheduler.Reminder, now time.Time) bool {
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

// safeURL reports whether u may be a button link: Slack rejects a message
// with a malformed or over-long URL (invalid_blocks), and anything but
// http(s) has no business in a reminder.
func safeURL(u string) bool {
	if u == "" || len(u) > 3000 {
		return false
	}
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "https" || p.Scheme == "http") && p.Host != ""
}

// EventType is the message metadata event type of every reminder. Its
// payload holds key, subscription, event_id, start (RFC 3339, UTC) and offset
// (scheduler.FormatOffset), so the bot after a crash and the audit can find
// reminders in Slack.
const EventType = "meeting_reminder"

const (
	fieldKey          = "key"
	fieldSubscription = "subscription"
	fieldEventID      = "event_id"
	fieldStart        = "start"
	fieldOffset       = "offset"
)

func metadata(r scheduler.Reminder) slack.SlackMetadata {
	return slack.SlackMetadata{EventType: EventType, EventPayload: map[string]any{
		fieldKey:          r.Key,
		fieldSubscription: r.Subscription.ID,
		fieldEventID:      r.Meeting.ID,
		fieldStart:        r.Meeting.Start.UTC().Format(time.RFC3339),
		fieldOffset:       scheduler.FormatOffset(r.Offset),
	}}
}
