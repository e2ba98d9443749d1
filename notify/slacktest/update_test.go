package slacktest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// chat.update answers with the fields Slack documents and edits the message
// in place: new text and blocks, the metadata kept when none is given, the
// "edited" mark in history.
func TestUpdateEditsTheMessageInPlace(t *testing.T) {
	s := seeded(t)
	api := slack.New(slacktest.Token, slack.OptionAPIURL(s.URL()))
	ctx := context.Background()
	md := slack.SlackMetadata{EventType: "meeting_reminder", EventPayload: map[string]any{"key": "k1"}}
	section := func(text string) slack.Block {
		return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, false), nil, nil)
	}
	_, ts, err := api.PostMessageContext(ctx, "C0GENERAL1", slack.MsgOptionText("Standup starts in 10 minutes", false),
		slack.MsgOptionBlocks(section("*Standup* starts in 10 minutes")), slack.MsgOptionMetadata(md))
	if err != nil {
		t.Fatal(err)
	}

	_, got := post(t, s, "chat.update", url.Values{"token": {slacktest.Token}, "channel": {"C0GENERAL1"}, "ts": {ts}, "text": {"Standup: Cancelled"}})
	if missing := missingKeys(fixture(t, "chat.update"), got); len(missing) > 0 {
		t.Errorf("chat.update response lacks documented fields %v; got %v", missing, got)
	}
	ch, ts2, text, err := api.UpdateMessageContext(ctx, "C0GENERAL1", ts, slack.MsgOptionText("Standup: Moved", false),
		slack.MsgOptionBlocks(section("*Standup* ~starts in 10 minutes~"), section("*Moved to* 10:00")))
	if err != nil || ch != "C0GENERAL1" || ts2 != ts || text != "Standup: Moved" {
		t.Fatalf("UpdateMessage() = %q, %q, %q, %v; want the channel, the same ts and the new text", ch, ts2, text, err)
	}
	msgs := s.Messages()
	if len(msgs) != 1 {
		t.Fatalf("messages after two updates = %d, want the one posted", len(msgs))
	}
	m := msgs[0]
	if m.Text != "Standup: Moved" || !strings.Contains(string(m.Blocks), "Moved to") || m.Edited.IsZero() {
		t.Errorf("updated message = text %q, blocks %s, edited %v; want the new text and blocks, marked edited", m.Text, m.Blocks, m.Edited)
	}
	if m.Metadata == nil || m.Metadata.EventPayload["key"] != "k1" {
		t.Errorf("updated message metadata = %+v, want the posted one kept", m.Metadata)
	}
	hist, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: "C0GENERAL1", IncludeAllMetadata: true})
	if err != nil || len(hist.Messages) != 1 {
		t.Fatalf("history = %v, %v", hist, err)
	}
	if h := hist.Messages[0]; h.Edited == nil || h.Edited.User != slacktest.BotUserID || h.Metadata.EventType != "meeting_reminder" || len(h.Blocks.BlockSet) != 2 {
		t.Errorf("history message = edited %+v, metadata %q, %d blocks; want edited by the bot, metadata and blocks kept", h.Edited, h.Metadata.EventType, len(h.Blocks.BlockSet))
	}

	// An empty blocks array removes the blocks.
	if _, _, _, err := api.UpdateMessageContext(ctx, "C0GENERAL1", ts, slack.MsgOptionText("Standup: Moved to 10:00", false), slack.MsgOptionBlocks()); err != nil {
		t.Fatal(err)
	}
	if m := s.Messages()[0]; m.Blocks != nil || m.Text != "Standup: Moved to 10:00" {
		t.Errorf("message after blocks=[] = blocks %s, text %q; want no blocks and the text", m.Blocks, m.Text)
	}
}

// chat.update refuses what Slack documents it refuses, and changes nothing
// then.
func TestUpdateErrors(t *testing.T) {
	s := seeded(t)
	s.AddChannel(slacktest.Channel{ID: "C0ARCHIVE1", Name: "old", Member: true})
	general := s.AddMessage(slacktest.Message{Channel: "C0GENERAL1", Text: "reminder"})
	archived := s.AddMessage(slacktest.Message{Channel: "C0ARCHIVE1", Text: "reminder"})
	s.UpdateChannel(slacktest.Channel{ID: "C0ARCHIVE1", Name: "old", Member: true, Archived: true})
	other := s.AddMessage(slacktest.Message{Channel: "C0GENERAL1", Text: "someone else", User: "U0ALICE001"})
	section := func(n int) string {
		b, _ := json.Marshal([]map[string]any{{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": strings.Repeat("a", n)}}})
		return string(b)
	}
	tests := []struct {
		name string
		form url.Values
		want string
	}{
		{"unknown ts", url.Values{"channel": {"C0GENERAL1"}, "ts": {"1.000001"}, "text": {"x"}}, "message_not_found"},
		{"no ts", url.Values{"channel": {"C0GENERAL1"}, "text": {"x"}}, "message_not_found"},
		{"another user's message", url.Values{"channel": {"C0GENERAL1"}, "ts": {other.TS}, "text": {"x"}}, "cant_update_message"},
		{"unknown channel", url.Values{"channel": {"C0NOWHERE1"}, "ts": {general.TS}, "text": {"x"}}, "channel_not_found"},
		{"archived channel", url.Values{"channel": {"C0ARCHIVE1"}, "ts": {archived.TS}, "text": {"x"}}, "is_inactive"},
		{"nothing to show", url.Values{"channel": {"C0GENERAL1"}, "ts": {general.TS}, "blocks": {"[]"}}, "no_text"},
		{"text over 4,000 characters", url.Values{"channel": {"C0GENERAL1"}, "ts": {general.TS}, "text": {strings.Repeat("é", 4001)}}, "msg_too_long"},
		{"section over the limit", url.Values{"channel": {"C0GENERAL1"}, "ts": {general.TS}, "text": {"x"}, "blocks": {section(3001)}}, "invalid_blocks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.form.Set("token", slacktest.Token)
			_, got := post(t, s, "chat.update", tt.form)
			if got["ok"] != false || got["error"] != tt.want {
				t.Errorf("chat.update(%s) = %v, want error %q", tt.name, got, tt.want)
			}
		})
	}
	for _, m := range s.Messages() {
		if !m.Edited.IsZero() || (m.Text != "reminder" && m.Text != "someone else") {
			t.Errorf("message %s after refused updates = %q, edited %v; want it untouched", m.TS, m.Text, m.Edited)
		}
	}
	// A text at 4,000 characters passes; the limit is in characters.
	_, got := post(t, s, "chat.update", url.Values{"token": {slacktest.Token}, "channel": {"C0GENERAL1"}, "ts": {general.TS}, "text": {strings.Repeat("é", 4000)}})
	if got["ok"] != true {
		t.Errorf("chat.update(4,000 two-byte characters) = %v, want ok", got)
	}

	// slack-go hands the code to its caller; a fault queued for the method
	// fails it as for any other.
	api := slack.New(slacktest.Token, slack.OptionAPIURL(s.URL()))
	s.Fail("chat.update", "", slacktest.Fault{Error: "edit_window_closed"})
	_, _, _, err := api.UpdateMessageContext(context.Background(), "C0GENERAL1", general.TS, slack.MsgOptionText("y", false))
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) || se.Err != "edit_window_closed" {
		t.Errorf("UpdateMessage() with a queued fault = %v, want edit_window_closed", err)
	}
}
