package notify_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/action"
)

// TestInviteMessage: a notice says who invited whom to what and when, as
// <!date> tokens, with the answer buttons (naming the person's calendar
// and the event, or a series' recurring event) beside Open in Calendar;
// event text is inert.
func TestInviteMessage(t *testing.T) {
	m := meeting()
	m.Organizer, m.Title, m.Response = "Bob", "Planning *now*", meetingbot.ResponseNeedsAction
	inv := meetingbot.Invitation{Key: meetingbot.InviteKey("U0ALICE001", "series1"), User: "U0ALICE001", Calendar: "alice@example.com",
		Event: "series1", Meeting: m, Series: true, At: meetingStart.Add(-time.Hour)}
	text, blocks := notify.InviteMessage(inv)
	wantText := "Bob invited you: Planning ∗now∗, <!date^1772442000^{date_short_pretty} {time}|2026-03-02 09:00 UTC>–<!date^1772443800^{time}|09:30 UTC>"
	if text != wantText {
		t.Errorf("InviteMessage text = %q, want %q", text, wantText)
	}
	b, _ := json.Marshal(blocks)
	body := strings.ReplaceAll(string(b), `\u003c`, "<")
	for _, want := range []string{":envelope_with_arrow: *Bob* invited you: *Planning ∗now∗*", "your answer holds for every occurrence", `"open_event"`, m.HTMLLink} {
		if !strings.Contains(body, want) {
			t.Errorf("InviteMessage blocks %s, want %q", body, want)
		}
	}
	line, buttons, _ := answerOf(blocks)
	if !strings.Contains(line, "You haven't answered") || len(buttons) != 3 {
		t.Fatalf("InviteMessage answer = %q %v, want not answered and three buttons", line, buttons)
	}
	if v, ok := action.ParseRSVP(buttons[action.RSVPGoing]); !ok || v.Event != "series1" || v.Calendar != "alice@example.com" {
		t.Errorf("Going's value %q, want the series on Alice's calendar", buttons[action.RSVPGoing])
	}
}

// TestInviteDigestOfAMailingList: forty invitations found at once are
// one message Slack takes (a line each, each with its own answer menu
// within Block Kit's limits), found again by any of their keys.
func TestInviteDigestOfAMailingList(t *testing.T) {
	e := newEnv(t)
	var invs []meetingbot.Invitation
	for i := range 40 {
		m := meeting()
		m.ID, m.Title, m.Organizer = "list"+strings.Repeat("x", i%3)+string(rune('A'+i)), "All hands "+string(rune('A'+i)), "announce@example.com"
		m.Start = meetingStart.Add(time.Duration(i) * 24 * time.Hour)
		m.End = m.Start.Add(time.Hour)
		invs = append(invs, meetingbot.Invitation{Key: meetingbot.InviteKey("U0ALICE001", m.ID), User: "U0ALICE001", Calendar: "alice@example.com",
			Event: m.ID, Meeting: m, At: meetingStart.Add(-time.Hour)})
	}
	rc, err := e.slack.NotifyInviteDigest(t.Context(), invs)
	if err != nil {
		t.Fatalf("NotifyInviteDigest(40) = %v", err)
	}
	msgs := e.srv.Messages()
	if len(msgs) != 1 || !strings.HasPrefix(msgs[0].Channel, "D") {
		t.Fatalf("messages = %+v, want one DM", msgs)
	}
	var blocks slack.Blocks
	if err := json.Unmarshal(msgs[0].Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	if n := len(blocks.BlockSet); n != 41 {
		t.Errorf("digest blocks = %d, want a headline and 40 lines", n)
	}
	for i, b := range blocks.BlockSet[1:] {
		sec := b.(*slack.SectionBlock)
		menu := sec.Accessory.SelectElement
		if menu == nil || menu.ActionID != action.RSVPMenu || len(menu.Options) != 3 {
			t.Fatalf("line %d has no answer menu: %+v", i, sec.Accessory)
		}
		var answers []meetingbot.Response
		for _, o := range menu.Options {
			v, ok := action.ParseRSVP(o.Value)
			if !ok || v.Event != invs[i].Event || v.Calendar != "" {
				t.Errorf("line %d option %q, want the event %s of her own calendar", i, o.Value, invs[i].Event)
			}
			answers = append(answers, v.Response)
		}
		if !slices.Equal(answers, []meetingbot.Response{meetingbot.ResponseAccepted, meetingbot.ResponseTentative, meetingbot.ResponseDeclined}) {
			t.Errorf("line %d answers %v", i, answers)
		}
	}
	if !strings.HasPrefix(msgs[0].Text, "40 new invitations: All hands A, All hands B") {
		t.Errorf("digest text %q", msgs[0].Text)
	}
	for _, i := range []int{0, 39} {
		got, found, err := e.slack.Delivered(t.Context(), invs[i].Reminder())
		if err != nil || !found || got != rc {
			t.Errorf("Delivered(%s) = %+v, %v, %v; want %+v", invs[i].Key, got, found, err, rc)
		}
	}
	if _, err := e.slack.NotifyInviteDigest(t.Context(), append(invs, invs[:6]...)); err == nil {
		t.Error("NotifyInviteDigest(46) succeeded; a digest holds 45")
	}
}

// TestNotifyInviteIsFoundAgain: one notice is a DM to the person, with
// its key in the metadata, found again by Delivered.
func TestNotifyInviteIsFoundAgain(t *testing.T) {
	e := newEnv(t)
	m := meeting()
	m.Organizer = "Bob"
	inv := meetingbot.Invitation{Key: meetingbot.InviteKey("U0ALICE001", m.ID), User: "U0ALICE001", Calendar: "alice@example.com", Event: m.ID, Meeting: m, At: meetingStart.Add(-time.Hour)}
	rc, err := e.slack.NotifyInvite(t.Context(), inv)
	if err != nil {
		t.Fatal(err)
	}
	msgs := e.srv.Messages()
	if len(msgs) != 1 || msgs[0].Channel != rc.Channel || !strings.HasPrefix(msgs[0].Text, "Bob invited you: Weekly sync") {
		t.Fatalf("messages %+v, want the notice at %+v", msgs, rc)
	}
	if md := msgs[0].Metadata; md == nil || md.EventPayload["key"] != inv.Key || md.EventPayload["subscription"] != meetingbot.InviteSubscription("U0ALICE001") {
		t.Errorf("metadata %+v, want the notice's key and pseudo-subscription", msgs[0].Metadata)
	}
	got, found, err := e.slack.Delivered(t.Context(), inv.Reminder())
	if err != nil || !found || got != rc {
		t.Errorf("Delivered = %+v, %v, %v; want %+v", got, found, err, rc)
	}
}
