package notify_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/notify"
)

// rendered is a reminder message as a reader sees it: the notification
// text, the headline, each line of the details, and the buttons.
type rendered struct {
	text, headline string
	details        []string
	buttons        map[string]string // action_id -> URL
	textObjects    []map[string]any  // every text object of the blocks
}

func render(t *testing.T, text string, blocks any) rendered {
	t.Helper()
	b, err := json.Marshal(blocks)
	if err != nil {
		t.Fatal(err)
	}
	var got []struct {
		Type string         `json:"type"`
		Text map[string]any `json:"text"`
		Els  []struct {
			ActionID string `json:"action_id"`
			URL      string `json:"url"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	r := rendered{text: text, buttons: map[string]string{}}
	for i, blk := range got {
		if blk.Text != nil {
			r.textObjects = append(r.textObjects, blk.Text)
			s, _ := blk.Text["text"].(string)
			switch i {
			case 0:
				r.headline = s
			case 1:
				r.details = strings.Split(s, "\n")
			}
		}
		for _, el := range blk.Els {
			r.buttons[el.ActionID] = el.URL
		}
	}
	return r
}

// A title, an organizer or a join link comes from whoever sent the
// invitation. None of them may draw lines of their own, format text, hide
// or reorder characters, or have Slack parse links and names in them.
func TestEventTextIsInert(t *testing.T) {
	tests := []struct {
		name                   string
		title, organizer       string
		wantTitle, wantOrgLine string // as shown: the headline's title and the organizer line
	}{
		{
			name:        "fake lines",
			title:       "Standup\n*Organizer:* CEO\n*Join:* https://evil.example/zoom",
			wantTitle:   "Standup ∗Organizer:∗ CEO ∗Join:∗ https://evil.example/zoom",
			organizer:   "Mallory\r\n*Join:* https://evil.example/j/1",
			wantOrgLine: "*Organizer:* Mallory ∗Join:∗ https://evil.example/j/1",
		},
		{
			name:        "formatting",
			title:       "*URGENT* _all hands_ ~cancelled~ `rm -rf /`",
			wantTitle:   "∗URGENT∗ ˍall handsˍ ∼cancelled∼ ˋrm -rf /ˋ",
			organizer:   "> the CEO",
			wantOrgLine: "*Organizer:* ˃ the CEO",
		},
		{
			name:        "quote and list markers",
			title:       "> quoted\n- listed\n1. numbered",
			wantTitle:   "˃ quoted - listed 1. numbered",
			organizer:   "- Mallory",
			wantOrgLine: "*Organizer:* ‐ Mallory",
		},
		{
			name:        "bidi override and zero-width characters",
			title:       "Invoice \u202egnp.exe\u202c review\u200b\u2066\u2069\ufeff",
			wantTitle:   "Invoice gnp.exe review",
			organizer:   "Al\u200bice\u200f",
			wantOrgLine: "*Organizer:* Alice",
		},
		{
			name:        "control characters",
			title:       "Sync\x1b[31m red\x07\x00\u0085end",
			wantTitle:   "Sync[31m red end",
			organizer:   "Bob\tSmith",
			wantOrgLine: "*Organizer:* Bob Smith",
		},
		{
			name:        "ordinary titles stay as written",
			title:       "1:1 Alice/Bob – snake_case review, 2*3 = 6, C++ ~ Rust, A * B, Q&A",
			wantTitle:   "1:1 Alice/Bob – snake_case review, 2*3 = 6, C++ ~ Rust, A * B, Q&amp;A",
			organizer:   "Dana O'Neil (she/her)",
			wantOrgLine: "*Organizer:* Dana O'Neil (she/her)",
		},
		{
			name:        "emoji sequences survive",
			title:       "Team 👨\u200d👩\u200d👧 lunch",
			wantTitle:   "Team 👨\u200d👩\u200d👧 lunch",
			organizer:   "Alice",
			wantOrgLine: "*Organizer:* Alice",
		},
		{
			name:        "nothing left",
			title:       "\u200b\u202e \n",
			wantTitle:   "(No title)",
			organizer:   "Alice",
			wantOrgLine: "*Organizer:* Alice",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := meeting()
			m.Title, m.Organizer = tt.title, tt.organizer
			r := reminder(sub("#standup"), m, 10*time.Minute)
			text, blocks := notify.Message(r, r.TriggerAt)
			got := render(t, text, blocks)
			if want := ":calendar: *" + tt.wantTitle + "* starts in 10 minutes"; got.headline != want {
				t.Errorf("Message(%q) headline = %q, want %q", tt.title, got.headline, want)
			}
			if !strings.HasPrefix(got.text, tt.wantTitle+" starts in 10 minutes (") || strings.Contains(got.text, "\n") {
				t.Errorf("Message(%q) text = %q, want one line starting %q", tt.title, got.text, tt.wantTitle)
			}
			if len(got.details) != 2 || got.details[1] != tt.wantOrgLine {
				t.Errorf("Message(organizer %q) details = %q, want the When line and %q", tt.organizer, got.details, tt.wantOrgLine)
			}
			for _, obj := range got.textObjects {
				if obj["type"] == "mrkdwn" && obj["verbatim"] != true {
					t.Errorf("Message(%q) text object %v: want verbatim true, so Slack links and parses nothing", tt.title, obj)
				}
			}
		})
	}
}

// Only a link to a known meeting service, over https and without user
// info, becomes the Join button; any other link is shown as text that
// Slack does not link.
func TestJoinButtonHosts(t *testing.T) {
	tests := []struct {
		join      string
		extra     []string // JOIN_URL_HOSTS
		button    bool
		wantShown string // the details' Join line; "" for none
	}{
		{join: "https://meet.google.com/abc-defg-hij", button: true},
		{join: "https://zoom.us/j/123", button: true},
		{join: "https://us02web.zoom.us/j/123?pwd=x", button: true},
		{join: "https://acme.zoomgov.com/j/1", button: true},
		{join: "https://teams.microsoft.com/l/meetup-join/19%3ameeting_x%40thread.v2/0", button: true},
		{join: "https://teams.live.com/meet/9384", button: true},
		{join: "https://acme.webex.com/meet/alice", button: true},
		{join: "https://meet.jit.si/standup", extra: []string{"meet.jit.si"}, button: true},
		{join: "https://video.acme.example/r/1", extra: []string{"acme.example"}, button: true},
		// Not a button.
		{join: "http://evil.example/j/1", wantShown: "*Join:* `http://evil.example/j/1`"},
		{join: "http://zoom.us/j/1", wantShown: "*Join:* `http://zoom.us/j/1`"},
		{join: "https://zoom.us@evil.example/j/1", wantShown: "*Join:* `https://zoom.us@evil.example/j/1`"},
		{join: "https://user:pw@zoom.us/j/1", wantShown: "*Join:* `https://user:pw@zoom.us/j/1`"},
		{join: "https://evil.example/zoom", wantShown: "*Join:* `https://evil.example/zoom`"},
		{join: "https://zoom.us.evil.example/j/1", wantShown: "*Join:* `https://zoom.us.evil.example/j/1`"},
		{join: "https://evilzoom.us/j/1", wantShown: "*Join:* `https://evilzoom.us/j/1`"},
		{join: "https://meet.google.com.evil.example/x", wantShown: "*Join:* `https://meet.google.com.evil.example/x`"},
		{join: "https://meet.jit.si/standup", wantShown: "*Join:* `https://meet.jit.si/standup`"},
		{join: "https://zoom.us:8443/j/1", wantShown: "*Join:* `https://zoom.us:8443/j/1`"},
		{join: "https://zoom.us\\@evil.example/j/1"},
		{join: "https://evil.example/`*bold*`"},
		{join: "javascript:alert(1)"},
	}
	for _, tt := range tests {
		m := meeting()
		m.JoinURL = tt.join
		r := reminder(sub("#standup"), m, 10*time.Minute)
		text, blocks := notify.Message(r, r.TriggerAt, tt.extra...)
		got := render(t, text, blocks)
		if url, ok := got.buttons["join"]; ok != tt.button || (ok && url != tt.join) {
			t.Errorf("Message(join %q, hosts %v) join button = %q (%v), want button %v", tt.join, tt.extra, url, ok, tt.button)
		}
		shown := ""
		for _, l := range got.details {
			if strings.HasPrefix(l, "*Join:*") {
				shown = l
			}
		}
		if shown != tt.wantShown {
			t.Errorf("Message(join %q, hosts %v) Join line = %q, want %q", tt.join, tt.extra, shown, tt.wantShown)
		}
	}
}

// The configured hosts reach the message through Config.JoinHosts.
func TestJoinHostsConfigured(t *testing.T) {
	e := newEnv(t, func(c *notify.Config) { c.JoinHosts = []string{"meet.jit.si"} })
	m := meeting()
	m.JoinURL = "https://meet.jit.si/standup"
	if _, err := e.slack.Notify(context.Background(), reminder(sub("#standup"), m, 10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	msgs := e.srv.Messages()
	if len(msgs) != 1 || !strings.Contains(string(msgs[0].Blocks), `"url":"https://meet.jit.si/standup"`) {
		t.Errorf("messages = %+v, want one with a Join button to meet.jit.si", msgs)
	}
}

// A number that starts the text would start a numbered list.
func TestNumberedListMarkerNeutralised(t *testing.T) {
	m := meeting()
	m.Title = "1. Planning"
	r := reminder(sub("#standup"), m, 10*time.Minute)
	text, _ := notify.Message(r, r.TriggerAt)
	if !strings.HasPrefix(text, "1․ Planning starts") {
		t.Errorf("Message(%q) text = %q, want the list marker replaced by a look-alike", m.Title, text)
	}
}
