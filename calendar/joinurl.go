package calendar

import (
	"html"
	"regexp"
	"strings"

	"google.golang.org/api/calendar/v3"
)

// joinURL returns the video call link of an event: Google Meet's
// hangoutLink, else the conference's video entry point, else the first
// Zoom, Teams, Meet or Webex link in the location, then the description.
func joinURL(ev *calendar.Event) string {
	if ev.HangoutLink != "" {
		return ev.HangoutLink
	}
	if ev.ConferenceData != nil {
		for _, ep := range ev.ConferenceData.EntryPoints {
			if ep != nil && ep.EntryPointType == "video" && ep.Uri != "" {
				return ep.Uri
			}
		}
	}
	if u := findJoinURL(ev.Location); u != "" {
		return u
	}
	return findJoinURL(ev.Description)
}

// joinURLPattern matches the meeting links of the common video services,
// not their other pages: a Zoom meeting path (/j/, /my/, /s/, /w/,
// /wc/join/) on zoom.us or zoomgov.com and their subdomains, a Meet code,
// a Teams meeting, a Webex meeting on a site subdomain. The host must end
// right where the service's domain does, so zoom.us.example.com is not
// Zoom. The URL runs to the first space, quote or angle bracket.
var joinURLPattern = regexp.MustCompile(`(?i)\bhttps?://(?:` +
	`(?:[a-z0-9-]+\.)*zoom(?:gov)?\.(?:us|com)/(?:j|my|s|w|wc/join)/` +
	`|meet\.google\.com/[a-z]{3}-[a-z]{4}-[a-z]{3}\b` +
	`|teams\.microsoft\.com/(?:l/meetup-join|meet)/` +
	`|teams\.live\.com/meet/` +
	`|(?:[a-z0-9-]+\.)+webex\.com/(?:meet/|join/|[a-z0-9_-]+/j\.php|wbxmjs/joinservice/)` +
	`)[^\s<>"'` + "`" + `]*`)

// findJoinURL returns the first meeting link in text, which may be plain
// or HTML (Google stores rich descriptions as HTML).
func findJoinURL(text string) string {
	if text == "" {
		return ""
	}
	u := joinURLPattern.FindString(html.UnescapeString(text))
	// Sentence punctuation after a link is not part of it; a closing
	// bracket is, when the link opened one.
	for u != "" {
		last := u[len(u)-1]
		switch {
		case strings.IndexByte(".,;:!?*", last) >= 0,
			last == ')' && strings.Count(u, "(") < strings.Count(u, ")"),
			last == ']' && strings.Count(u, "[") < strings.Count(u, "]"):
			u = u[:len(u)-1]
			continue
		}
		break
	}
	return u
}
