package calendar

import (
	"html"
	"regexp"
	"slices"
	"strings"
	"time"

	"google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot"
)

// useDefaults replaces the reminders of each event of a listing that uses
// its calendar's defaults ("useDefault: Whether the default reminders of
// the calendar apply to the event", Events resource) with the listing's
// defaultReminders ("The default reminders on the calendar for the
// authenticated user", events.list response), so that meeting reads them
// as the event's own. Only events.list carries the defaults: an event read
// with events.get keeps useDefault, and its meeting says it could not tell
// (Meeting.RemindersUnread).
func useDefaults(items []*calendar.Event, defaults []*calendar.EventReminder) {
	for _, ev := range items {
		if ev != nil && ev.Reminders != nil && ev.Reminders.UseDefault {
			ev.Reminders = &calendar.EventReminders{Overrides: defaults}
		}
	}
}

// popups returns the popup reminders of ev as offsets, ascending and
// distinct, and whether it could tell them. Email reminders are not
// reminders in Slack; an event without a reminders object, or with
// useDefault and no defaults read (events.get), cannot tell.
func popups(ev *calendar.Event) ([]time.Duration, bool) {
	if ev.Reminders == nil || ev.Reminders.UseDefault {
		return nil, false
	}
	var out []time.Duration
	for _, r := range ev.Reminders.Overrides {
		// "Valid values are between 0 and 40320 (4 weeks in minutes)."
		if r != nil && r.Method == "popup" && r.Minutes >= 0 && r.Minutes <= 40320 {
			out = append(out, time.Duration(r.Minutes)*time.Minute)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), true
}

// guests fills m's attendee counts and rooms from ev's attendees. Rooms
// are attendees with resource true ("Whether the attendee is a resource",
// Events resource), named by their displayName; the others are people.
func guests(m *meetingbot.Meeting, ev *calendar.Event) {
	m.OthersHidden = ev.AttendeesOmitted
	if ev.Organizer != nil && !ev.Organizer.Self && ev.Organizer.Email != "" {
		m.Others = 1 // organized by someone else: not alone, even unlisted
	}
	others := 0
	for _, a := range ev.Attendees {
		switch {
		case a == nil:
		case a.Resource:
			if a.DisplayName != "" {
				m.Rooms = append(m.Rooms, a.DisplayName)
			}
		default:
			m.Attendees++
			if a.ResponseStatus == "accepted" {
				m.Accepted++
			}
			if !a.Self {
				others++
			}
		}
	}
	m.Others = max(m.Others, others)
}

// dialIn returns the conference's phone entry point: its label (the number
// as people dial it) or its tel: URI, and its PIN ("entryPointType: phone",
// "label", "pin", Events resource conferenceData.entryPoints[]).
func dialIn(ev *calendar.Event) string {
	if ev.ConferenceData == nil {
		return ""
	}
	for _, ep := range ev.ConferenceData.EntryPoints {
		if ep == nil || ep.EntryPointType != "phone" {
			continue
		}
		n := ep.Label
		if n == "" {
			n = strings.TrimPrefix(ep.Uri, "tel:")
		}
		if n == "" {
			continue
		}
		if ep.Pin != "" {
			n += " PIN: " + ep.Pin
		}
		return n
	}
	return ""
}

// attachments returns ev's file attachments ("fileUrl: URL link to the
// attachment. For adding Google Drive file attachments use the same
// format as in alternateLink property of the Files resource", Events
// resource); which links are shown is the notifier's to choose.
func attachments(ev *calendar.Event) []meetingbot.Attachment {
	var out []meetingbot.Attachment
	for _, a := range ev.Attachments {
		if a != nil && a.FileUrl != "" {
			out = append(out, meetingbot.Attachment{Title: a.Title, URL: a.FileUrl})
		}
	}
	return out
}

// Excerpt limits: a few lines of the description, each short.
const (
	excerptLines = 3
	excerptChars = 300
)

var (
	// lineTags end a line in a rich description (Google stores one as
	// HTML: <br>, <p>, <li>, <div>).
	lineTags = regexp.MustCompile(`(?i)<\s*(br|/p|p|/div|div|li|/li|/h[1-6]|tr)\b[^>]*>`)
	// anyTag is every other tag, dropped with its attributes (a link's
	// address with it: the card shows text, not the description's links).
	anyTag = regexp.MustCompile(`<[^>]*>`)
)

// excerpt returns the first lines of a description as plain text: tags
// dropped, entities decoded, blank lines and the lines that are only the
// join link skipped, at most excerptLines lines of excerptChars in all.
func excerpt(desc, join string) string {
	if desc == "" {
		return ""
	}
	text := lineTags.ReplaceAllString(desc, "\n")
	text = html.UnescapeString(anyTag.ReplaceAllString(text, ""))
	var lines []string
	n := 0
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if line == "" || (join != "" && strings.Contains(line, join) && len(line) < len(join)+20) {
			continue
		}
		if r := []rune(line); n+len(r) > excerptChars {
			line = string(r[:max(excerptChars-n, 0)]) + "…"
		}
		lines = append(lines, line)
		n += len([]rune(line))
		if len(lines) == excerptLines || n >= excerptChars {
			break
		}
	}
	return strings.Join(lines, "\n")
}
