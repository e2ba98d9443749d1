package notify

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/meetingbot/meetingbot"
	"github.com/slack-go/slack"
)

// The card: what a person needs to join and prepare, beside the title,
// time and links. Everything in it is the event's text, written by
// whoever sent the invitation, and follows the title's rules: made inert
// and escaped, so it cannot ping (<!channel>, <@U…>), draw lines of its
// own, format itself or disguise a link (<https://evil|Agenda>), and cut
// to Block Kit's limits. A private meeting shows none of it where only its
// owner may read it (shown keeps its time alone).

// maxFiles is how many attachments a reminder links, each a button.
const maxFiles = 5

// maxButtonText is the most characters of a button's text ("Maximum
// length for the text in this field is 75 characters", Block Kit
// reference, button element); bytes are never fewer.
const maxButtonText = 75

// fileHosts are the hosts of the attachments a reminder links: Google
// Drive's, where the Calendar API puts a file attached to an event
// ("fileUrl … the same format as in alternateLink property of the Files
// resource in the Drive API": drive.google.com, docs.google.com).
var fileHosts = []string{"drive.google.com", "docs.google.com"}

// cardDetails returns the lines the card adds to the details section, each
// starting with a line break, within room bytes: how many accepted, the
// rooms and the dial-in.
func cardDetails(m meetingbot.Meeting, room int) string {
	var lines []string
	if m.Attendees > 1 {
		lines = append(lines, fmt.Sprintf("\n*Guests:* %d of %d accepted", m.Accepted, m.Attendees))
	}
	if len(m.Rooms) > 0 {
		rooms := make([]string, len(m.Rooms))
		for i, r := range m.Rooms {
			rooms[i] = escape(inert(r))
		}
		lines = append(lines, "\n*Room:* "+strings.Join(rooms, ", "))
	}
	if d := escape(inert(m.DialIn)); d != "" {
		lines = append(lines, "\n*Dial-in:* "+d)
	}
	var out string
	for _, l := range lines {
		if len(out)+len(l) > room {
			l = fit(l, room-len(out))
		}
		out += l
	}
	return out
}

// excerptBlock shows the first lines of the description, each inert and
// escaped and quoted, in a context block of its own; nil when there are
// none.
func excerptBlock(m meetingbot.Meeting) slack.Block {
	var lines []string
	for line := range strings.SplitSeq(m.Excerpt, "\n") {
		if l := escape(inert(line)); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return nil
	}
	text := fit(strings.Join(lines, "\n"), maxSectionText)
	return slack.NewContextBlock("reminder_excerpt", markdown(text))
}

// fileButtons link the meeting's attachments on Google Drive, at most
// maxFiles, each a button named by the file's title; an attachment
// elsewhere, or with a link a button cannot carry, is left out, as a join
// link is.
func fileButtons(m meetingbot.Meeting) []slack.BlockElement {
	var out []slack.BlockElement
	for _, a := range m.Attachments {
		if len(out) == maxFiles {
			break
		}
		if !fileURL(a.URL) {
			continue
		}
		title := inert(a.Title)
		if title == "" {
			title = "Attachment"
		}
		text := fit(":paperclip: "+title, maxButtonText)
		out = append(out, slack.NewButtonBlockElement(fmt.Sprintf("open_file_%d", len(out)), "",
			slack.NewTextBlockObject(slack.PlainTextType, text, true, false)).WithURL(a.URL))
	}
	return out
}

// fileURL reports whether u may link an attachment: a button URL on one
// of fileHosts, without user info or a port.
func fileURL(u string) bool {
	if !buttonURL(u) {
		return false
	}
	p, err := url.Parse(u)
	if err != nil || p.User != nil || p.Port() != "" {
		return false
	}
	host := strings.ToLower(p.Hostname())
	for _, h := range fileHosts {
		if host == h {
			return true
		}
	}
	return false
}
