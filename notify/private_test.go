package notify_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// secrets are what a private meeting's reminder may show only to the
// calendar's owner: its title, its organizer, its event link and its way
// in (a Meet link, or a Zoom link found in the location or description).
var secrets = []string{"layoffs", "CEO Office", "calendar/event", "meet.google.com", "zoom.us"}

func privateMeeting(private bool) meetingbot.Meeting {
	m := meeting()
	m.Title, m.Organizer, m.Private = "Board: layoffs 2026", "CEO Office", private
	return m
}

// personal is a subscription made with "/meetingbot on": the caller's own
// calendar (their profile email) DMed to their Slack user ID.
func personal() meetingbot.Subscription {
	s := sub("U0ALICE001")
	s.ID, s.FromSlack = "slack:alice@example.com=U0ALICE001", true
	return s
}

// A private or confidential event is the owner's business: its title,
// organizer, event link and join link go only to a DM to the calendar's
// owner; anywhere else the reminder says "Private meeting" and when, and
// nothing else: with impersonation a confidential meeting's Meet or Zoom
// link would otherwise reach a whole channel.
func TestPrivateMeeting(t *testing.T) {
	channelFromSlack := sub("C0STANDUP1")
	channelFromSlack.ID, channelFromSlack.FromSlack = "slack:alice@example.com=C0STANDUP1", true
	tests := []struct {
		name    string
		sub     meetingbot.Subscription
		private bool
		shown   bool // whether the details reach the destination
	}{
		{"channel", sub("#standup"), true, false},
		{"channel by ID", sub("C0STANDUP1"), true, false},
		{"channel subscribed from Slack", channelFromSlack, true, false},
		{"DM to another user by email", sub("bob@example.com"), true, false},
		{"DM to another user by ID", sub("W0BOB00001"), true, false},
		{"DM to the owner, no destination", sub(""), true, true},
		{"DM to the owner by email", sub("alice@example.com"), true, true},
		{"DM to the owner, email in another case", sub(" Alice@Example.com "), true, true},
		{"DM to the owner made with /meetingbot on", personal(), true, true},
		{"not private, channel", sub("#standup"), false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			m := privateMeeting(tt.private)
			if tt.name == "channel by ID" {
				// A join link found in the location rather than in the
				// conference data is as private.
				m.JoinURL = "https://us02web.zoom.us/j/123456789"
			}
			if _, err := e.slack.Notify(context.Background(), reminder(tt.sub, m, 10*time.Minute)); err != nil {
				t.Fatalf("Notify() error: %v", err)
			}
			msgs := e.srv.Messages()
			if len(msgs) != 1 {
				t.Fatalf("messages = %d, want 1", len(msgs))
			}
			all := msgs[0].Text + string(msgs[0].Blocks)
			if tt.shown {
				for _, s := range []string{"layoffs", "CEO Office", "calendar/event", m.JoinURL} {
					if !strings.Contains(all, s) {
						t.Errorf("message to %s lacks %q: %s", tt.name, s, all)
					}
				}
				return
			}
			for _, secret := range secrets {
				if strings.Contains(all, secret) {
					t.Errorf("message to %s contains %q: %s", tt.name, secret, all)
				}
			}
			got := render(t, msgs[0].Text, msgs[0].Blocks)
			if !strings.HasPrefix(got.text, "Private meeting starts in 10 minutes (<!date^1772442000^") {
				t.Errorf("text = %q, want Private meeting and the time", got.text)
			}
			if got.headline != ":calendar: *Private meeting* starts in 10 minutes" || len(got.details) != 1 || !strings.HasPrefix(got.details[0], "*When:* <!date^1772442000^") {
				t.Errorf("headline, details = %q, %q; want Private meeting and the time alone", got.headline, got.details)
			}
			for id, url := range got.buttons {
				if url != "" || id == "join" || id == "open_event" {
					t.Errorf("button %s (%q) in a private meeting's reminder to %s, want no link", id, url, tt.name)
				}
			}
		})
	}
}

// Every other form a reminder takes (the text Slack falls back to when it
// refuses blocks, a digest of many, the edit of a moved one) keeps a
// private meeting's title and links out of a channel too.
func TestPrivateMeetingInEveryForm(t *testing.T) {
	channel := sub("#standup")
	r := reminder(channel, privateMeeting(true), 10*time.Minute)
	now := meetingStart.Add(-10 * time.Minute)
	check := func(form, all string) {
		t.Helper()
		for _, secret := range secrets {
			if strings.Contains(all, secret) {
				t.Errorf("%s in a channel contains %q: %s", form, secret, all)
			}
		}
		if !strings.Contains(all, "Private meeting") {
			t.Errorf("%s in a channel does not say Private meeting: %s", form, all)
		}
	}

	e := newEnv(t)
	e.srv.Fail("chat.postMessage", "", slacktest.Fault{Error: "invalid_blocks"})
	if _, err := e.slack.Notify(context.Background(), r); err != nil {
		t.Fatalf("Notify(blocks refused) error: %v", err)
	}
	msgs := e.srv.Messages()
	if len(msgs) != 1 || len(msgs[0].Blocks) > 0 && string(msgs[0].Blocks) != "null" {
		t.Fatalf("messages = %+v, want one of text alone", msgs)
	}
	check("the text fallback", msgs[0].Text)

	public := meeting()
	public.ID, public.JoinURL, public.HTMLLink = "public_20260302T090000Z", "https://teams.microsoft.com/l/meetup-join/1", ""
	other := reminder(channel, public, 10*time.Minute)
	text, blocks := notify.DigestMessage([]meetingbot.Reminder{r, other}, now)
	check("a digest", text+marshal(t, blocks))

	text, blocks = notify.EditedMessage(meetingbot.Follow{Reminder: r, Kind: meetingbot.EditMoved, MovedTo: meetingStart.Add(time.Hour), SentAt: now})
	check("an edit of a moved reminder", text+marshal(t, blocks))
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
