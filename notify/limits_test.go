package notify_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/meetingbot/meetingbot/notify"
)

// No event content may make a reminder unsendable: whatever the title,
// organizer or links, Slack (the emulator, which enforces Block Kit's
// limits) takes the message, and it still says when the meeting starts.
func TestLongFieldsStaySendable(t *testing.T) {
	longHTTPS := "https://zoom.us/j/1?pwd=" + strings.Repeat("x", 3000)
	tests := []struct {
		name                       string
		title, organizer, join     string
		wantTitle, wantOrganizer   string // a prefix the message must keep
		wantJoinButton, wantJoinIn string
	}{
		{name: "2,600 ampersands", title: strings.Repeat("&", 2600), wantTitle: strings.Repeat("&amp;", 500)},
		{name: "10,000 letters", title: strings.Repeat("a", 10000), wantTitle: strings.Repeat("a", 2900)},
		{name: "angle brackets", title: strings.Repeat("<!channel>", 1000), wantTitle: strings.Repeat("&lt;!channel&gt;", 150)},
		{name: "two-byte letters", title: strings.Repeat("é", 5000), wantTitle: strings.Repeat("é", 1400)},
		{name: "four-byte emoji", title: strings.Repeat("🎉", 3000), wantTitle: strings.Repeat("🎉", 700)},
		{name: "long organizer", organizer: strings.Repeat("<&>", 3000), wantOrganizer: strings.Repeat("&lt;&amp;&gt;", 150)},
		{name: "join link over 3,000 characters", join: longHTTPS},
		{name: "join link over http", join: "http://zoom.us/j/123?pwd=a&b", wantJoinIn: "`http://zoom.us/j/123?pwd=a&amp;b`"},
		{name: "join link with a space", join: "https://zoom.us/j/1 2"},
		{name: "join link with a non-ASCII host", join: "https://zöom.us/j/1"},
		{name: "everything at once", title: strings.Repeat("&<", 5000), organizer: strings.Repeat("&", 5000), join: "https://meet.google.com/" + strings.Repeat("a", 2970),
			wantTitle: strings.Repeat("&amp;&lt;", 100), wantOrganizer: strings.Repeat("&amp;", 100), wantJoinButton: "https://meet.google.com/aaa"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			m := meeting()
			if tt.title != "" {
				m.Title = tt.title
			}
			if tt.organizer != "" {
				m.Organizer = tt.organizer
			}
			if tt.join != "" {
				m.JoinURL = tt.join
			}
			if _, err := e.slack.Notify(context.Background(), reminder(sub("#standup"), m, 10*time.Minute)); err != nil {
				t.Fatalf("Notify(%s) error: %v", tt.name, err)
			}
			msgs := e.srv.Messages()
			if len(msgs) != 1 {
				t.Fatalf("messages = %d, want 1", len(msgs))
			}
			var blocks []struct {
				Type string `json:"type"`
				Text struct {
					Text string `json:"text"`
				} `json:"text"`
				Elements []struct {
					ActionID string `json:"action_id"`
					URL      string `json:"url"`
				} `json:"elements"`
			}
			if err := json.Unmarshal(msgs[0].Blocks, &blocks); err != nil {
				t.Fatal(err)
			}
			headline, details := blocks[0].Text.Text, blocks[1].Text.Text
			checkField(t, "text", msgs[0].Text, 3000)
			checkField(t, "headline", headline, 3000)
			checkField(t, "details", details, 3000)
			if !strings.HasPrefix(headline, ":calendar: *"+tt.wantTitle) || !strings.HasSuffix(headline, "* starts in 10 minutes") {
				t.Errorf("headline = %.80q…%q, want the title's start and the time to go", headline, tail(headline))
			}
			if !strings.HasPrefix(msgs[0].Text, tt.wantTitle) || !strings.HasSuffix(msgs[0].Text, "starts in 10 minutes (<!date^1772442000^{date_short_pretty} {time}|2026-03-02 09:00 UTC>)") {
				t.Errorf("text = %.80q…%q, want the title's start and the time to go", msgs[0].Text, tail(msgs[0].Text))
			}
			if !strings.HasPrefix(details, "*When:* <!date^1772442000^{date_short_pretty} {time}|2026-03-02 09:00 UTC> – <!date^1772443800^{time}|09:30 UTC>") {
				t.Errorf("details = %.120q, want the time first, whole", details)
			}
			if tt.wantOrganizer != "" && !strings.Contains(details, "*Organizer:* "+tt.wantOrganizer) {
				t.Errorf("details = %.120q…, want the organizer's start", details)
			}
			if tt.wantJoinIn != "" && !strings.Contains(details, "*Join:* "+tt.wantJoinIn) {
				t.Errorf("details = %q, want the join link %q as text", details, tt.wantJoinIn)
			}
			var join string
			if len(blocks) > 2 {
				for _, el := range blocks[2].Elements {
					if el.ActionID == "join" {
						join = el.URL
					}
				}
			}
			if tt.join != "" && !strings.HasPrefix(join, tt.wantJoinButton) || (tt.wantJoinButton == "" && tt.join != "" && join != "") {
				t.Errorf("join button URL = %.60q, want %.60q", join, tt.wantJoinButton)
			}
		})
	}
}

// Every cut position, against entities, <!date> tokens and multi-byte
// characters: each field stays within its limit and whole.
func TestMessageCutsCleanly(t *testing.T) {
	for shift := range 8 {
		for _, unit := range []string{"&<>é🎉", "a&", "<é", "🎉&x"} {
			m := meeting()
			m.Title = strings.Repeat("a", shift) + strings.Repeat(unit, 800)
			m.Organizer = strings.Repeat("z", shift) + strings.Repeat(unit, 800)
			for _, late := range []bool{false, true} {
				r := reminder(sub(""), m, 10*time.Minute)
				r.Late = late
				text, blocks := notify.Message(r, r.TriggerAt)
				b, _ := json.Marshal(blocks)
				var got []struct {
					Text struct {
						Text string `json:"text"`
					} `json:"text"`
				}
				if err := json.Unmarshal(b, &got); err != nil {
					t.Fatal(err)
				}
				checkField(t, "text", text, 3000)
				for i, blk := range got[:2] {
					checkField(t, []string{"headline", "details"}[i], blk.Text.Text, 3000)
				}
				if !strings.Contains(got[0].Text.Text, "…*") {
					t.Errorf("Message(shift %d, %q) headline does not mark the cut title: %q", shift, unit, tail(got[0].Text.Text))
				}
			}
		}
	}
}

// checkField fails t unless field is at most limit bytes (so at most limit
// characters however Slack counts), valid UTF-8, and every & and < in it
// opens a whole entity or <!date> token.
func checkField(t *testing.T, name, field string, limit int) {
	t.Helper()
	if len(field) > limit {
		t.Errorf("%s is %d bytes, want at most %d", name, len(field), limit)
	}
	if !utf8.ValidString(field) {
		t.Errorf("%s is not valid UTF-8: …%q", name, tail(field))
	}
	for i := 0; i < len(field); i++ {
		rest := field[i:]
		switch {
		case rest[0] == '&' && (strings.HasPrefix(rest, "&amp;") || strings.HasPrefix(rest, "&lt;") || strings.HasPrefix(rest, "&gt;")):
		case rest[0] == '<' && strings.HasPrefix(rest, "<!date^") && strings.Contains(rest, ">"):
			i += strings.IndexByte(rest, '>')
		case rest[0] == '&' || rest[0] == '<' || rest[0] == '>':
			t.Errorf("%s has a broken entity or token at %q", name, rest[:min(len(rest), 20)])
			return
		}
	}
}

func tail(s string) string {
	if len(s) <= 60 {
		return s
	}
	i := len(s) - 60
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
