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
// blocks. A private meeting (meetingbot.Meeting.Private) shows as "Private
// meeting" and its time, with no link of any kind (join, event), unless the
// reminder goes to a DM to the calendar's owner (see toOwner). Nothing from the event is trusted as markup: the title and the
// organizer are made one line of inert text (no line breaks, formatting
// markers, control or invisible characters; see inert) and escaped
// wherever they appear, and Slack is told to show every text verbatim.
// Only an https link to Google Meet, Zoom, Microsoft Teams, Webex or one of
// joinHosts (each host covering its subdomains), without user info, becomes
// the Join button; another http(s) join link is shown as code. Times are
// <!date> tokens, so each reader sees their own zone; the fallbacks are in
// UTC.
//
// No event content makes the message one Slack refuses: after escaping, the
// title and the organizer are cut (never inside an entity, a <!date> token
// or a UTF-8 sequence, and marked with "…") so that every field fits its
// Block Kit limit, while what says when the meeting starts stays whole.
//
// The card (card.go) adds what a person needs to join and prepare: how
// many of those invited accepted (counts, never names), the rooms, the
// dial-in, a few lines of the description, each inert and escaped as the
// title is, and buttons to the attachments on Google Drive.
//
// A reminder of a recurring meeting in a subscription made from Slack
// carries a "Mute this series" button too (see muteButton), a reminder
// posted before its meeting starts carries the snooze buttons (see
// snoozeButtons), and one in a DM to its calendar's owner of a meeting
// they were invited to says their answer, with Going / Maybe / No (see
// reminderAnswer).
func Message(r meetingbot.Reminder, now time.Time, joinHosts ...string) (text string, blocks []slack.Block) {
	m, title := shown(r)
	start := dateToken(m.Start, "{date_short_pretty} {time}", "2006-01-02 15:04 UTC")
	head := headline(r, now)
	text = notification(r, title, now, maxFallback)

	when := start
	if !m.End.IsZero() && m.End.After(m.Start) {
		when += " – " + dateToken(m.End, "{time}", "15:04 UTC")
	}
	details := "*When:* " + when
	join := joinButton(m.JoinURL, joinHosts)
	if !join && linkURL(m.JoinURL) && !strings.Contains(m.JoinURL, "`") {
		// Not a link for the Join button, but one a reader may check and
		// copy: show it as code, which Slack neither links nor formats.
		if line := "\n*Join:* `" + escape(m.JoinURL) + "`"; len(details)+len(line) <= maxSectionText {
			details += line
		}
	}
	if organizer := escape(inert(m.Organizer)); organizer != "" {
		const label = "\n*Organizer:* "
		if room := maxSectionText - len(details) - len(label); room > len(ellipsis) {
			details += label + fit(organizer, room)
		}
	}
	details += cardDetails(m, maxSectionText-len(details))
	const open, close = ":calendar: *", "* "
	blocks = []slack.Block{
		slack.NewSectionBlock(markdown(open+fit(title, maxSectionText-len(open)-len(close)-len(head))+close+head),
			nil, nil, slack.SectionBlockOptionBlockID("reminder_headline")),
		slack.NewSectionBlock(markdown(details), nil, nil, slack.SectionBlockOptionBlockID("reminder_details")),
	}
	if ex := excerptBlock(m); ex != nil {
		blocks = append(blocks, ex)
	}
	if files := fileButtons(m); len(files) > 0 {
		blocks = append(blocks, slack.NewActionBlock("reminder_files", files...))
	}
	var buttons []slack.BlockElement
	if join {
		buttons = append(buttons, slack.NewButtonBlockElement("join", "", slack.NewTextBlockObject(slack.PlainTextType, "Join", false, false)).
			WithURL(m.JoinURL).WithStyle(slack.StylePrimary))
	}
	if buttonURL(m.HTMLLink) {
		buttons = append(buttons, slack.NewButtonBlockElement("open_event", "", slack.NewTextBlockObject(slack.PlainTextType, "Open in Calendar", false, false)).
			WithURL(m.HTMLLink))
	}
	if mute := muteButton(r); mute != nil {
		buttons = append(buttons, mute)
	}
	buttons = append(buttons, snoozeButtons(r, now)...)
	if len(buttons) > 0 {
		blocks = append(blocks, slack.NewActionBlock("reminder_actions", buttons...))
	}
	return text, append(blocks, reminderAnswer(r)...)
}

// privateTitle is what a private meeting's reminder says in its title
// where only its owner may read the details.
const privateTitle = "Private meeting"

// shown returns the meeting as its reminder may show it (a private one
// reduced to its time unless the reminder goes to its owner) and its
// title, inert and escaped.
func shown(r meetingbot.Reminder) (m meetingbot.Meeting, title string) {
	m = r.Meeting
	if m.Private && !toOwner(r.Subscription) {
		// Only the owner may read a private event's details, and its join
		// link (conference data, or a URL from its location or
		// description) is one: with it anyone in a channel could walk in.
		// Keep its time alone.
		m = meetingbot.Meeting{Title: privateTitle, Start: m.Start, End: m.End}
	}
	title = escape(inert(m.Title))
	if title == "" {
		title = "(No title)"
	}
	return m, title
}

// notification is the one line a push notification shows, at most n bytes:
// the title (cut to fit), how long until the meeting and, while on time,
// when it starts.
func notification(r meetingbot.Reminder, title string, now time.Time, n int) string {
	tail := " " + headline(r, now)
	if !isLate(r, now) {
		tail += " (" + dateToken(r.Meeting.Start, "{date_short_pretty} {time}", "2006-01-02 15:04 UTC") + ")"
	}
	return fit(title, n-len(tail)) + tail
}

// maxPlainTitle bounds the title in plainText.
const maxPlainTitle = 200

// plainText renders r as a minimal text message, for when Slack refuses
// the blocks of Message: the notification line with a title of at most
// maxPlainTitle bytes, and the Join link when it is one Message would make
// a button of. It follows the same rules for private meetings and event
// text as Message.
func plainText(r meetingbot.Reminder, now time.Time, joinHosts []string) string {
	m, title := shown(r)
	text := notification(r, fit(title, maxPlainTitle), now, maxFallback)
	if joinButton(m.JoinURL, joinHosts) {
		text += " Join: " + escape(m.JoinURL)
	}
	return text
}

// toOwner reports whether sub's reminders go to a DM to its calendar's
// owner: no destination (a DM to the user whose email is the calendar ID),
// the calendar ID itself as the destination, or a subscription made from
// Slack that DMs a user, which only "/meetingbot on" makes, for the
// caller's own calendar (their profile email); a subscription made from
// Slack for a channel posts to a channel ID.
func toOwner(sub meetingbot.Subscription) bool {
	dest := strings.TrimSpace(sub.Destination)
	return dest == "" || strings.EqualFold(dest, strings.TrimSpace(sub.CalendarID)) ||
		(sub.FromSlack && isUserID(dest))
}

// isUserID reports whether dest is a Slack user ID (U…, W…).
func isUserID(dest string) bool {
	return len(dest) > 1 && (dest[0] == 'U' || dest[0] == 'W')
}

// markdown is a mrkdwn text object that Slack shows verbatim: it links no
// bare URL or channel name and parses no mention, so only the markup the
// bot writes (escaped event text, <!date> tokens) means anything.
func markdown(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, text, false, true)
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

// meetingHosts are the hosts of the video services whose links become the
// Join button, from the join links each service hands out: Google Meet
// (meet.google.com), Zoom (zoom.us and a company's or a region's
// subdomain such as us02web.zoom.us; zoom.com; zoomgov.com), Microsoft
// Teams (teams.microsoft.com, teams.live.com, teams.cloud.microsoft and
// the US government clouds) and Webex (a site's subdomain of webex.com).
var meetingHosts = []struct {
	host       string
	subdomains bool
}{
	{"meet.google.com", false},
	{"zoom.us", true},
	{"zoom.com", true},
	{"zoomgov.com", true},
	{"teams.microsoft.com", false},
	{"teams.live.com", false},
	{"teams.cloud.microsoft", false},
	{"gov.teams.microsoft.us", false},
	{"dod.teams.microsoft.us", false},
	{"webex.com", true},
}

// joinButton reports whether u may be the Join button: a button URL
// (buttonURL) without user info or a port of its own, whose host is a
// known meeting host or one of extra (JOIN_URL_HOSTS) or a subdomain of
// one of extra. Anyone who can invite can put any link in an event's
// conference data; only these are offered as the way into the meeting.
func joinButton(u string, extra []string) bool {
	if !buttonURL(u) {
		return false
	}
	p, err := url.Parse(u)
	if err != nil || p.User != nil || (p.Port() != "" && p.Port() != "443") {
		return false
	}
	host := strings.ToLower(p.Hostname())
	under := func(domain string) bool { return strings.HasSuffix(host, "."+domain) }
	for _, h := range meetingHosts {
		if host == h.host || (h.subdomains && under(h.host)) {
			return true
		}
	}
	for _, h := range extra {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" && (host == h || under(h)) {
			return true
		}
	}
	return false
}

// linkURL reports whether u is an absolute http(s) URL with a host and
// nothing a URL must percent-encode that could break out of it, nor a
// backslash, which browsers read as a slash where Go's parser does not.
func linkURL(u string) bool {
	if u == "" || len(u) > maxSectionText {
		return false
	}
	for i := 0; i < len(u); i++ {
		if u[i] <= ' ' || u[i] >= 0x7f || u[i] == '\\' {
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
