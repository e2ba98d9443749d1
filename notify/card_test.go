package notify_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
)

// cardMeeting is a meeting with everything the card shows.
func cardMeeting() meetingbot.Meeting {
	m := meeting()
	m.Attendees, m.Accepted, m.Others = 6, 4, 5
	m.Rooms = []string{"Room 4.01 (8)"}
	m.DialIn = "+1 555-0100 PIN: 123456"
	m.Attachments = []meetingbot.Attachment{
		{Title: "Q4 agenda", URL: "https://docs.google.com/document/d/1abc/edit"},
		{Title: "Budget", URL: "https://drive.google.com/file/d/2def/view"},
		{Title: "Elsewhere", URL: "https://evil.example/agenda.pdf"},
		{Title: "Plain", URL: "http://drive.google.com/file/d/3/view"},
	}
	m.Excerpt = "Agenda:\nQ4 & budget\nHiring"
	return m
}

// posted sends r through the Slack emulator, which refuses what Slack
// refuses, and returns its one message's text and blocks.
func posted(t *testing.T, r meetingbot.Reminder) string {
	t.Helper()
	e := newEnv(t)
	if _, err := e.slack.Notify(context.Background(), r); err != nil {
		t.Fatalf("Notify() error: %v", err)
	}
	msgs := e.srv.Messages()
	if len(msgs) != 1 {
		t.Fatalf("messages = %d, want 1", len(msgs))
	}
	return msgs[0].Text + "\n" + string(msgs[0].Blocks)
}

// The card says who organizes, how many of those invited accepted (no
// names), the room, the dial-in and a few lines of the description, and
// links the attachments on Google Drive as buttons; an attachment
// anywhere else, or over http, is not linked.
func TestReminderCard(t *testing.T) {
	got := posted(t, reminder(sub("C0STANDUP1"), cardMeeting(), 10*time.Minute))
	for _, want := range []string{
		"*Guests:* 4 of 6 accepted", "*Room:* Room 4.01 (8)", "*Dial-in:* +1 555-0100 PIN: 123456",
		`Agenda:\nQ4 \u0026amp; budget\nHiring`, "reminder_excerpt",
		"https://docs.google.com/document/d/1abc/edit", ":paperclip: Q4 agenda", "https://drive.google.com/file/d/2def/view",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("card lacks %q: %s", want, got)
		}
	}
	for _, not := range []string{"evil.example", "http://drive.google.com", "Elsewhere"} {
		if strings.Contains(got, not) {
			t.Errorf("card links %q: %s", not, got)
		}
	}
}

// The card's text is the event's and follows the title's rules: nothing
// in a description, a room or a dial-in pings, formats, draws lines or
// disguises a link, and an attachment's title is a button's plain text.
func TestReminderCardIsInert(t *testing.T) {
	m := cardMeeting()
	m.Excerpt = "<!channel> join now\n<https://evil.example|Agenda doc>\n*urgent* <@U0BOSS0001>\n> quoted"
	m.Rooms = []string{"<!here> Room\n*Join:* https://evil.example"}
	m.DialIn = "<tel:+1|call> now"
	m.Attachments = []meetingbot.Attachment{{Title: "<!everyone> *Agenda*", URL: "https://docs.google.com/document/d/1/edit"}}
	got := posted(t, reminder(sub("C0STANDUP1"), m, 10*time.Minute))
	for _, bad := range []string{"<!channel>", "<!here>", "<!everyone>", "<https://evil", "<@U0BOSS0001>", "<tel:", `\n*Join:*`} {
		if strings.Contains(got, bad) {
			t.Errorf("card carries %q as markup: %s", bad, got)
		}
	}
	for _, want := range []string{"&lt;!channel&gt; join now", "&lt;https://evil.example|Agenda doc&gt;", "∗urgent∗", "˃ quoted"} {
		if !strings.Contains(strings.ReplaceAll(got, `\u0026`, "&"), want) {
			t.Errorf("card lacks %q, the text as typed: %s", want, got)
		}
	}
}

// A private meeting's card shows nothing of it where only its owner may
// read it, and all of it in their DM.
func TestReminderCardOfAPrivateMeeting(t *testing.T) {
	m := cardMeeting()
	m.Private = true
	got := posted(t, reminder(sub("C0STANDUP1"), m, 10*time.Minute))
	for _, s := range []string{"Guests", "Room 4.01", "555-0100", "Q4", "docs.google.com", "drive.google.com", "Hiring"} {
		if strings.Contains(got, s) {
			t.Errorf("a private meeting's reminder in a channel shows %q: %s", s, got)
		}
	}
	got = posted(t, reminder(personal(), m, 10*time.Minute))
	for _, s := range []string{"Guests", "Room 4.01", "555-0100", "docs.google.com", "Hiring"} {
		if !strings.Contains(got, s) {
			t.Errorf("a private meeting's reminder to its owner lacks %q", s)
		}
	}
}

// However long what the event says, the card stays within Block Kit's
// limits: the emulator takes the message (it refuses what Slack refuses).
func TestReminderCardWithinBlockKitLimits(t *testing.T) {
	m := cardMeeting()
	long := strings.Repeat("&<>é", 1000)
	m.Organizer, m.DialIn, m.Excerpt = long, long, long+"\n"+long+"\n"+long
	m.Rooms = []string{long, long}
	m.Attachments = nil
	for range 8 {
		m.Attachments = append(m.Attachments, meetingbot.Attachment{Title: long, URL: "https://drive.google.com/file/d/x/view"})
	}
	got := posted(t, reminder(sub("C0STANDUP1"), m, 10*time.Minute))
	var blocks []map[string]any
	raw := got[strings.Index(got, "\n")+1:]
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		t.Fatalf("blocks: %v", err)
	}
	files := 0
	for _, b := range blocks {
		if b["block_id"] == "reminder_files" {
			files = len(b["elements"].([]any))
		}
	}
	if files != 5 {
		t.Errorf("attachments linked = %d, want 5 at most", files)
	}
}
