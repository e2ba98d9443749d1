package notify_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/action"
)

// answerOf returns what blocks say of the person's answer: the answer
// line, and the answer buttons (action ID to value), nil when none.
func answerOf(blocks []slack.Block) (line string, buttons map[string]string, styles map[string]slack.Style) {
	for _, b := range blocks {
		switch blk := b.(type) {
		case *slack.ContextBlock:
			if blk.BlockID == action.AnswerBlock {
				line = blk.ContextElements.Elements[0].(*slack.TextBlockObject).Text
			}
		case *slack.ActionBlock:
			for _, el := range blk.Elements.ElementSet {
				if btn, ok := el.(*slack.ButtonBlockElement); ok && action.IsRSVP(btn.ActionID) {
					if buttons == nil {
						buttons, styles = map[string]string{}, map[string]slack.Style{}
					}
					buttons[btn.ActionID], styles[btn.ActionID] = btn.Value, btn.Style
				}
			}
		}
	}
	return line, buttons, styles
}

// TestAnswerButtonsOnRemindersOfInvitations: a DM reminder of a meeting
// its calendar's owner was invited to says their answer and carries
// Going / Maybe / No naming their calendar and the event, the answer
// given marked; a meeting they organise, or a reminder in a channel,
// has neither.
func TestAnswerButtonsOnRemindersOfInvitations(t *testing.T) {
	dm := meetingbot.Subscription{ID: "alice", CalendarID: "alice@example.com"}
	fromSlack := meetingbot.Subscription{ID: "alice-dm", CalendarID: "alice@example.com", Destination: "U0ALICE001", FromSlack: true}
	channel := meetingbot.Subscription{ID: "team", CalendarID: "alice@example.com", Destination: "C0STANDUP1"}
	for _, tt := range []struct {
		name     string
		sub      meetingbot.Subscription
		response meetingbot.Response
		line     string
		marked   string
	}{
		{"invited, not answered", dm, meetingbot.ResponseNeedsAction, "You haven't answered this invitation yet.", ""},
		{"going, from /meetingbot on", fromSlack, meetingbot.ResponseAccepted, "Your answer: *Going*", action.RSVPGoing},
		{"maybe", dm, meetingbot.ResponseTentative, "Your answer: *Maybe*", action.RSVPMaybe},
		{"organised by the owner", dm, meetingbot.ResponseNone, "", ""},
		{"in a channel", channel, meetingbot.ResponseNeedsAction, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := meeting()
			m.Response = tt.response
			line, buttons, styles := answerOf(blocksOf(notify.Message(reminder(tt.sub, m, 10*time.Minute), meetingStart.Add(-10*time.Minute))))
			if tt.line == "" {
				if line != "" || buttons != nil {
					t.Fatalf("Message = line %q, buttons %v; want neither", line, buttons)
				}
				return
			}
			if !strings.HasSuffix(line, tt.line) {
				t.Errorf("answer line = %q, want it to end %q", line, tt.line)
			}
			want := []string{action.RSVPGoing, action.RSVPMaybe, action.RSVPNo}
			for _, id := range want {
				v, ok := action.ParseRSVP(buttons[id])
				if !ok || v.Calendar != "alice@example.com" || v.Event != m.ID || v.Response != "" {
					t.Errorf("%s value %q, want Alice's calendar and %s", id, buttons[id], m.ID)
				}
				if marked := styles[id] == slack.StylePrimary; marked != (id == tt.marked) {
					t.Errorf("%s marked = %v, want %v", id, marked, id == tt.marked)
				}
			}
		})
	}
}

// TestAnswerButtonsOnlyForPeopleWhoCanAnswer: Notify keeps the buttons
// when the calendar's owner can answer from Slack (AnswerFor)
// and drops them, keeping the answer line, when they cannot.
func TestAnswerButtonsOnlyForPeopleWhoCanAnswer(t *testing.T) {
	for _, tt := range []struct {
		name       string
		answerable func(context.Context, string) bool
		buttons    bool
	}{
		{"connected", func(_ context.Context, cal string) bool { return cal == "alice@example.com" }, true},
		{"not connected", func(context.Context, string) bool { return false }, false},
		{"nothing hears the clicks", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			if tt.answerable != nil {
				e.slack.AnswerFor(tt.answerable)
			}
			m := meeting()
			m.Response = meetingbot.ResponseNeedsAction
			r := reminder(meetingbot.Subscription{ID: "alice", CalendarID: "alice@example.com"}, m, 10*time.Minute)
			if _, err := e.slack.Notify(t.Context(), r); err != nil {
				t.Fatal(err)
			}
			var blocks slack.Blocks
			if err := json.Unmarshal(e.srv.Messages()[0].Blocks, &blocks); err != nil {
				t.Fatal(err)
			}
			line, buttons, _ := answerOf(blocks.BlockSet)
			if !strings.Contains(line, "You haven't answered") {
				t.Errorf("answer line = %q, want it kept", line)
			}
			if got := buttons != nil; got != tt.buttons {
				t.Errorf("answer buttons = %v, want %v", buttons, tt.buttons)
			}
		})
	}
}

// TestEditDeclinedSaysYouDeclined: a reminder whose meeting its owner
// declined is edited to say "You declined", not "Cancelled", strikes its
// time, and keeps the answer buttons to change their mind; in a channel
// it says the calendar's owner declined.
func TestEditDeclinedSaysYouDeclined(t *testing.T) {
	e := newEnv(t)
	e.slack.AnswerFor(func(context.Context, string) bool { return true })
	m := meeting()
	m.Response = meetingbot.ResponseAccepted
	dm := meetingbot.Subscription{ID: "alice", CalendarID: "alice@example.com"}
	f := e.sent(t, reminder(dm, m, 10*time.Minute), meetingbot.EditDeclined, time.Time{}, false)
	f.Reminder.Meeting = meetingbot.Meeting{ID: m.ID, Start: m.Start} // gone from the calendar: the title is read back
	if err := e.slack.Edit(t.Context(), f); err != nil {
		t.Fatal(err)
	}
	got := e.srv.Messages()[0]
	body := strings.ReplaceAll(string(got.Blocks), `\u003c`, "<")
	for _, want := range []string{"*Weekly sync* ~starts in 10 minutes~", "*When:* ~<!date^", "*You declined*"} {
		if !strings.Contains(body, want) {
			t.Errorf("edited reminder %s, want %q", body, want)
		}
	}
	if strings.Contains(body, "Cancelled") || strings.Contains(body, `"join"`) {
		t.Errorf("edited reminder %s says Cancelled or keeps Join", body)
	}
	if !strings.Contains(got.Text, "You declined") {
		t.Errorf("edited text %q, want You declined", got.Text)
	}
	var blocks slack.Blocks
	if err := json.Unmarshal(got.Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	_, buttons, styles := answerOf(blocks.BlockSet)
	if len(buttons) != 3 || styles[action.RSVPNo] != slack.StylePrimary {
		t.Errorf("answer buttons after declining = %v %v, want the three, No marked", buttons, styles)
	}

	channel := meetingbot.Subscription{ID: "team", CalendarID: "alice@example.com", Destination: "C0STANDUP1"}
	text, blocks2 := notify.EditedMessage(meetingbot.Follow{Reminder: reminder(channel, meeting(), 10*time.Minute), SentAt: meetingStart.Add(-10 * time.Minute), Kind: meetingbot.EditDeclined})
	b, _ := json.Marshal(blocks2)
	if !strings.Contains(string(b), "*Declined* by the calendar's owner") || strings.Contains(string(b), "You declined") || !strings.Contains(text, "Declined by the calendar's owner") {
		t.Errorf("declined in a channel = %q %s, want it said of the calendar's owner", text, b)
	}
	if _, buttons, _ := answerOf(blocks2); buttons != nil {
		t.Errorf("answer buttons in a channel: %v", buttons)
	}
}

// TestDigestLinesSayTheAnswer: a digest line of an invitation says the
// answer in a word, and has no answer control.
func TestDigestLinesSayTheAnswer(t *testing.T) {
	dm := meetingbot.Subscription{ID: "alice", CalendarID: "alice@example.com"}
	var rs []meetingbot.Reminder
	for i, resp := range []meetingbot.Response{meetingbot.ResponseNeedsAction, meetingbot.ResponseTentative, meetingbot.ResponseNone} {
		m := meeting()
		m.ID, m.Response = m.ID+string(rune('a'+i)), resp
		rs = append(rs, reminder(dm, m, 10*time.Minute))
	}
	_, blocks := notify.DigestMessage(rs, meetingStart.Add(-10*time.Minute))
	var lines []string
	for _, b := range blocks[1:] {
		lines = append(lines, b.(*slack.SectionBlock).Text.Text)
	}
	for i, want := range []string{" · not answered", " · Maybe", ""} {
		has := strings.Contains(lines[i], " · not answered") || strings.Contains(lines[i], " · Maybe")
		if (want == "") == has || (want != "" && !strings.Contains(lines[i], want)) {
			t.Errorf("digest line %d = %q, want %q", i, lines[i], want)
		}
	}
	b, _ := json.Marshal(blocks)
	if strings.Contains(string(b), "rsvp_") {
		t.Errorf("digest with answer controls: %s", b)
	}
}
