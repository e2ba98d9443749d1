package calendar

import (
	"testing"

	"google.golang.org/api/calendar/v3"
)

func TestFindJoinURL(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"empty", "", ""},
		{"zoom meeting", "https://zoom.us/j/85512345678", "https://zoom.us/j/85512345678"},
		{"zoom subdomain with password", "Join https://us02web.zoom.us/j/85512345678?pwd=aBc123 now", "https://us02web.zoom.us/j/85512345678?pwd=aBc123"},
		{"zoom personal room", "https://acme.zoom.us/my/alice", "https://acme.zoom.us/my/alice"},
		{"zoomgov", "https://acme.zoomgov.com/j/1612345678", "https://acme.zoomgov.com/j/1612345678"},
		{"zoom sentence end", "Link: https://zoom.us/j/123.", "https://zoom.us/j/123"},
		{"zoom in parentheses", "(https://zoom.us/j/123)", "https://zoom.us/j/123"},
		{"zoom download page is not a meeting", "Get the app at https://zoom.us/download", ""},
		{"zoom look-alike host", "https://zoom.us.example.com/j/123", ""},
		{"zoom look-alike prefix", "https://notzoom.us/j/123", ""},
		{"meet", "meet at https://meet.google.com/abc-defg-hij?authuser=0", "https://meet.google.com/abc-defg-hij?authuser=0"},
		{"meet landing page is not a meeting", "https://meet.google.com/", ""},
		{"teams", "https://teams.microsoft.com/l/meetup-join/19%3ameeting_NjQ0%40thread.v2/0?context=%7b%22Tid%22%3a%22t%22%7d",
			"https://teams.microsoft.com/l/meetup-join/19%3ameeting_NjQ0%40thread.v2/0?context=%7b%22Tid%22%3a%22t%22%7d"},
		{"teams new format", "https://teams.microsoft.com/meet/3312345678?p=AbCd", "https://teams.microsoft.com/meet/3312345678?p=AbCd"},
		{"teams live", "https://teams.live.com/meet/9312345678", "https://teams.live.com/meet/9312345678"},
		{"webex personal room", "https://acme.webex.com/meet/alice", "https://acme.webex.com/meet/alice"},
		{"webex j.php", "https://acme.webex.com/acme/j.php?MTID=m0123abcd", "https://acme.webex.com/acme/j.php?MTID=m0123abcd"},
		{"webex marketing page", "https://www.webex.com/downloads.html", ""},
		{"html anchor", `<a href="https://zoom.us/j/123?pwd=x&amp;uname=y">Join</a>`, "https://zoom.us/j/123?pwd=x&uname=y"},
		{"html escaped anchor", `&lt;a href=&quot;https://zoom.us/j/123&quot;&gt;`, "https://zoom.us/j/123"},
		{"angle brackets", "<https://meet.google.com/abc-defg-hij>", "https://meet.google.com/abc-defg-hij"},
		{"first of several", "https://teams.live.com/meet/1 or https://zoom.us/j/2", "https://teams.live.com/meet/1"},
		{"upper-case scheme", "HTTPS://ZOOM.US/j/123", "HTTPS://ZOOM.US/j/123"},
		{"other link only", "Docs: https://docs.example.com/zoom.us/j/1", ""},
		{"room name", "Room 4.12 (Berlin)", ""},
	}
	for _, tt := range tests {
		if got := findJoinURL(tt.text); got != tt.want {
			t.Errorf("%s: findJoinURL(%q) = %q, want %q", tt.name, tt.text, got, tt.want)
		}
	}
}

func TestJoinURLPrecedence(t *testing.T) {
	video := &calendar.ConferenceData{EntryPoints: []*calendar.EntryPoint{
		{EntryPointType: "phone", Uri: "tel:+1-555-0100"},
		{EntryPointType: "video", Uri: "https://meet.google.com/vid-eoen-try"},
	}}
	tests := []struct {
		name string
		ev   calendar.Event
		want string
	}{
		{"hangoutLink first", calendar.Event{HangoutLink: "https://meet.google.com/han-gout-lnk", ConferenceData: video, Location: "https://zoom.us/j/1"}, "https://meet.google.com/han-gout-lnk"},
		{"video entry point", calendar.Event{ConferenceData: video, Location: "https://zoom.us/j/1"}, "https://meet.google.com/vid-eoen-try"},
		{"location before description", calendar.Event{Location: "https://zoom.us/j/1", Description: "https://zoom.us/j/2"}, "https://zoom.us/j/1"},
		{"description", calendar.Event{Location: "Room 1", Description: "https://zoom.us/j/2"}, "https://zoom.us/j/2"},
		{"phone only", calendar.Event{ConferenceData: &calendar.ConferenceData{EntryPoints: []*calendar.EntryPoint{{EntryPointType: "phone", Uri: "tel:1"}}}}, ""},
	}
	for _, tt := range tests {
		if got := joinURL(&tt.ev); got != tt.want {
			t.Errorf("%s: joinURL() = %q, want %q", tt.name, got, tt.want)
		}
	}
}
