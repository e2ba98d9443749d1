package notify_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
)

func feedChannel(calendarID string) meetingbot.Subscription {
	return meetingbot.Subscription{ID: "slack:team=C0STANDUP1", CalendarID: calendarID, Destination: "C0STANDUP1", FromSlack: true}
}

func feedNotice(sub meetingbot.Subscription, was, now meetingbot.Meeting) meetingbot.Notice {
	id, updated := now.ID, now.Updated
	if id == "" {
		id, updated = was.ID, was.Updated
	}
	return meetingbot.Notice{Key: meetingbot.FeedKey(id, was, now, updated), Subscription: sub, Changes: meetingbot.FeedChanges(was, now),
		Was: was, Now: now, At: meetingStart.Add(-time.Hour)}
}

func blocksText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(b))
}

// TestFeedMessageOfEachChange: each kind of change is one line saying
// what happened, with the times as <!date> tokens (old and new for a
// move), the place, and the person by name, never by email; a private
// event says "Private meeting" and its time only; event text is inert.
func TestFeedMessageOfEachChange(t *testing.T) {
	m := meeting()
	m.Title, m.Location, m.Creator, m.CreatorEmail = "Review <!here>", "Room 1", "Bob", "bob@example.com"
	moved := m
	moved.Start, moved.End = m.Start.Add(time.Hour), m.End.Add(time.Hour)
	renamed := m
	renamed.Title = "Design review"
	placed := m
	placed.Location = "Room 2"
	private := m
	private.Private = true
	privateMoved := moved
	privateMoved.Private = true
	sub := feedChannel("team@group.calendar.google.com")
	tests := []struct {
		name     string
		n        meetingbot.Notice
		who      string
		want     []string
		mustNot  []string
		wantText string
	}{
		{"added", feedNotice(sub, meetingbot.Meeting{}, m), "<@W0BOB00001>", []string{":new: *Review &lt;!here&gt;* added: <!date^1772442000^", "· Room 1 · by <@W0BOB00001>", `"open_event"`}, nil,
			"Review &lt;!here&gt; added: <!date^1772442000^{date_short_pretty} {time}|2026-03-02 09:00 UTC>–<!date^1772443800^{time}|09:30 UTC> · Room 1 · by <@W0BOB00001>"},
		{"moved", feedNotice(sub, m, moved), "", []string{":arrow_right: *Review &lt;!here&gt;* moved to <!date^1772445600^", ", was <!date^1772442000^"}, nil,
			"Review &lt;!here&gt; moved to <!date^1772445600^{date_short_pretty} {time}|2026-03-02 10:00 UTC>–<!date^1772447400^{time}|10:30 UTC>, was <!date^1772442000^{date_short_pretty} {time}|2026-03-02 09:00 UTC>–<!date^1772443800^{time}|09:30 UTC>"},
		{"cancelled", feedNotice(sub, m, meetingbot.Meeting{}), "", []string{":x: *Review &lt;!here&gt;* cancelled: was <!date^1772442000^"}, []string{"open_event"}, ""},
		{"renamed", feedNotice(sub, m, renamed), "", []string{":pencil2: *Design review* renamed from Review &lt;!here&gt;"}, nil, ""},
		{"placed", feedNotice(sub, m, placed), "", []string{"now in Room 2, was Room 1"}, nil, ""},
		{"private added", feedNotice(sub, meetingbot.Meeting{}, private), "<@W0BOB00001>", []string{"*Private meeting* added"}, []string{"Review", "Room 1", "W0BOB00001", "open_event", "calendar/event"}, ""},
		{"private moved", feedNotice(sub, private, privateMoved), "", []string{"*Private meeting* moved to"}, []string{"Review", "Room"}, ""},
		{"a room's booking", feedNotice(feedChannel("c_1888abc@resource.calendar.google.com"), meetingbot.Meeting{}, m), "Bob", []string{"booked by Bob"}, nil, ""},
	}
	for _, tt := range tests {
		text, blocks := notify.FeedMessage(tt.n, tt.who)
		body := blocksText(t, blocks)
		for _, want := range tt.want {
			if !strings.Contains(body, want) {
				t.Errorf("%s: FeedMessage blocks %s, want %q", tt.name, body, want)
			}
		}
		for _, not := range append(tt.mustNot, "bob@example.com") {
			if strings.Contains(body, not) || strings.Contains(text, not) {
				t.Errorf("%s: FeedMessage %q %s, want no %q", tt.name, text, body, not)
			}
		}
		if tt.wantText != "" && text != tt.wantText {
			t.Errorf("%s: FeedMessage text = %q, want %q", tt.name, text, tt.wantText)
		}
	}
}

// TestNotifyChangeNamesTheSlackUserWhoMadeIt: the person who made an
// event is the Slack user of their email, mentioned, and the notice is
// found again by its key.
func TestNotifyChangeNamesTheSlackUserWhoMadeIt(t *testing.T) {
	e := newEnv(t)
	m := meeting()
	m.Creator, m.CreatorEmail = "Bob B.", "bob@example.com"
	n := feedNotice(feedChannel("team@group.calendar.google.com"), meetingbot.Meeting{}, m)
	rc, err := e.slack.NotifyChange(t.Context(), n)
	if err != nil {
		t.Fatal(err)
	}
	msgs := e.srv.Messages()
	if len(msgs) != 1 || msgs[0].Channel != "C0STANDUP1" || !strings.Contains(msgs[0].Text, "by <@W0BOB00001>") {
		t.Fatalf("messages %+v, want the notice in C0STANDUP1 naming <@W0BOB00001>", msgs)
	}
	if md := msgs[0].Metadata; md == nil || md.EventPayload["key"] != n.Key || md.EventPayload["subscription"] != meetingbot.FeedSubscription(n.Subscription.ID) {
		t.Errorf("metadata %+v, want the notice's key and pseudo-subscription", msgs[0].Metadata)
	}
	got, found, err := e.slack.Delivered(t.Context(), n.Reminder())
	if err != nil || !found || got != rc {
		t.Errorf("Delivered = %+v, %v, %v; want %+v", got, found, err, rc)
	}
	// Someone Slack does not know is named by their display name, never
	// their email.
	m.ID, m.CreatorEmail, m.Creator = "other", "carol@elsewhere.example", "Carol"
	if _, err := e.slack.NotifyChange(t.Context(), feedNotice(feedChannel("team@group.calendar.google.com"), meetingbot.Meeting{}, m)); err != nil {
		t.Fatal(err)
	}
	if msgs := e.srv.Messages(); len(msgs) != 2 || !strings.Contains(msgs[1].Text, "by Carol") || strings.Contains(msgs[1].Text, "carol@") {
		t.Errorf("second notice %q, want it by Carol, without her email", msgs[len(msgs)-1].Text)
	}
}

// TestAFloodOfChangesIsOneMessageSlackTakes: 200 events imported at once
// are one message within Block Kit's limits, found again by any key.
func TestAFloodOfChangesIsOneMessageSlackTakes(t *testing.T) {
	e := newEnv(t)
	sub := feedChannel("team@group.calendar.google.com")
	var ns []meetingbot.Notice
	for i := range 200 {
		m := meeting()
		m.ID, m.Title = fmt.Sprintf("import%03d", i), fmt.Sprintf("Imported %d", i)
		m.Start = meetingStart.Add(time.Duration(i) * time.Hour)
		m.End = m.Start.Add(time.Hour)
		ns = append(ns, feedNotice(sub, meetingbot.Meeting{}, m))
	}
	if _, err := e.slack.NotifyChanges(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	msgs := e.srv.Messages()
	if len(msgs) != 1 || !strings.HasPrefix(msgs[0].Text, "200 changes to the calendar team@group.calendar.google.com: 200 added") {
		t.Fatalf("messages %d, first %q; want one digest of 200 added", len(msgs), msgs[0].Text)
	}
	if _, found, err := e.slack.Delivered(t.Context(), ns[199].Reminder()); err != nil || !found {
		t.Errorf("Delivered(the 200th) = %v, %v; want found", found, err)
	}
}

// TestChannelAgendaHidesPrivateMeetings: a channel's agenda lists a
// private meeting as "Private meeting" and its time, as a channel's
// reminder does; a weekly one shows each meeting's day.
func TestChannelAgendaHidesPrivateMeetings(t *testing.T) {
	m := meeting()
	secret := meeting()
	secret.ID, secret.Title, secret.Private = "secret", "Interview with Carol", true
	a := meetingbot.ChannelAgenda{Subscription: feedChannel("team@group.calendar.google.com"), Weekly: true, Date: "2026-03-02", Zone: time.UTC,
		At: meetingStart.Add(-time.Hour), Start: meetingStart.Add(-9 * time.Hour), End: meetingStart.Add(7 * 24 * time.Hour),
		Meetings: []meetingbot.Meeting{m, secret}}
	text, blocks := notify.ChannelAgendaMessage(a)
	body := blocksText(t, blocks)
	for _, want := range []string{"*team@group.calendar.google.com* · The week from <!date^", ": 2 meetings", "*Weekly sync*", "*Private meeting*", "{date_short_pretty} {time}"} {
		if !strings.Contains(body, want) {
			t.Errorf("ChannelAgendaMessage blocks %s, want %q", body, want)
		}
	}
	if strings.Contains(body, "Interview") || strings.Contains(text, "Interview") {
		t.Errorf("ChannelAgendaMessage %q %s shows a private meeting's title", text, body)
	}
}
