package notify_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
)

// A private or confidential event is the owner's business: its title,
// organizer and event link go only to a DM to the calendar's owner;
// anywhere else the reminder says "Private meeting", when, and how to join.
func TestPrivateMeeting(t *testing.T) {
	tests := []struct {
		name    string
		sub     meetingbot.Subscription
		private bool
		shown   bool // whether the details reach the destination
	}{
		{"channel", sub("#standup"), true, false},
		{"channel by ID", sub("C0STANDUP1"), true, false},
		{"DM to another user by email", sub("bob@example.com"), true, false},
		{"DM to another user by ID", sub("W0BOB00001"), true, false},
		{"DM to the owner, no destination", sub(""), true, true},
		{"DM to the owner by email", sub("alice@example.com"), true, true},
		{"DM to the owner, email in another case", sub(" Alice@Example.com "), true, true},
		{"not private, channel", sub("#standup"), false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			m := meeting()
			m.Title, m.Organizer, m.Private = "Board: layoffs 2026", "CEO Office", tt.private
			if _, err := e.slack.Notify(context.Background(), reminder(tt.sub, m, 10*time.Minute)); err != nil {
				t.Fatalf("Notify() error: %v", err)
			}
			msgs := e.srv.Messages()
			if len(msgs) != 1 {
				t.Fatalf("messages = %d, want 1", len(msgs))
			}
			all := msgs[0].Text + string(msgs[0].Blocks)
			for _, secret := range []string{"layoffs", "CEO Office", "calendar/event"} {
				if strings.Contains(all, secret) != tt.shown {
					t.Errorf("message to %s contains %q = %v, want %v: %s", tt.name, secret, !tt.shown, tt.shown, all)
				}
			}
			if !tt.shown {
				got := render(t, msgs[0].Text, msgs[0].Blocks)
				if !strings.HasPrefix(got.text, "Private meeting starts in 10 minutes (<!date^1772442000^") {
					t.Errorf("text = %q, want Private meeting and the time", got.text)
				}
				if got.headline != ":calendar: *Private meeting* starts in 10 minutes" || len(got.details) != 1 || !strings.HasPrefix(got.details[0], "*When:* <!date^1772442000^") {
					t.Errorf("headline, details = %q, %q; want Private meeting and the time alone", got.headline, got.details)
				}
				if len(got.buttons) != 1 || got.buttons["join"] != m.JoinURL {
					t.Errorf("buttons = %v, want the Join button alone", got.buttons)
				}
			}
		})
	}
}
