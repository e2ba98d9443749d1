package selfservice_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify/action"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/selfservice"
)

// answers records the answers it is asked for and gives what it is told.
type fakeAnswers struct {
	mu        sync.Mutex
	asked     []string // user|calendar|event|answer
	refreshed []string
	links     int
	result    meetingbot.Answered
	err       error
}

func (a *fakeAnswers) Answer(_ context.Context, user, calendar, event string, r meetingbot.Response) (meetingbot.Answered, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, user+"|"+calendar+"|"+event+"|"+string(r))
	got := a.result
	got.Calendar, got.Event, got.Response = "alice@example.com", event, r
	return got, a.err
}

func (a *fakeAnswers) Refresh(_ context.Context, calendarID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refreshed = append(a.refreshed, calendarID)
}

func (a *fakeAnswers) ConsentLink(_ context.Context, user string) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.links++
	return fmt.Sprintf("https://bot.example.com/google/oauth/start?t=write-%s-%d", user, a.links), nil
}

func (a *fakeAnswers) seen() (asked, refreshed []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.asked...), append([]string(nil), a.refreshed...)
}

// reminderOf posts, as the bot, a reminder with its answer line and
// buttons naming target, and metadata, and returns it as Slack holds it.
func (e *env) reminderOf(t action.RSVP) slacktest.Message {
	e.t.Helper()
	value := action.RSVPValue(t)
	blocks := []slack.Block{
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, ":calendar: *Planning* starts in 10 minutes", false, true), nil, nil, slack.SectionBlockOptionBlockID("reminder_headline")),
		slack.NewContextBlock(action.AnswerBlock, slack.NewTextBlockObject(slack.MarkdownType, action.AnswerLine(meetingbot.ResponseNeedsAction), false, true)),
		slack.NewActionBlock(action.RSVPBlock,
			slack.NewButtonBlockElement(action.RSVPGoing, value, slack.NewTextBlockObject(slack.PlainTextType, "Going", false, false)),
			slack.NewButtonBlockElement(action.RSVPMaybe, value, slack.NewTextBlockObject(slack.PlainTextType, "Maybe", false, false)),
			slack.NewButtonBlockElement(action.RSVPNo, value, slack.NewTextBlockObject(slack.PlainTextType, "No", false, false))),
	}
	_, ts, err := e.cfg.Slack.PostMessage(eng, slack.MsgOptionText("Planning starts in 10 minutes", false), slack.MsgOptionBlocks(blocks...),
		slack.MsgOptionMetadata(slack.SlackMetadata{EventType: "meeting_reminder", EventPayload: map[string]any{"key": "plan1:10m:x", "subscription": "alice"}}))
	require.NoError(e.t, err)
	return e.message(ts)
}

// message returns the bot's message at ts in #eng, as it is now.
func (e *env) message(ts string) slacktest.Message {
	e.t.Helper()
	for _, m := range e.slack.Messages() {
		if m.Channel == eng && m.TS == ts {
			return m
		}
	}
	e.t.Fatalf("no message at %s", ts)
	return slacktest.Message{}
}

// clickOn sends user's click on m (action, with the message's blocks as
// Slack puts them in the payload) and returns the response_url.
func (e *env) clickOn(user string, m slacktest.Message, action map[string]any) string {
	e.t.Helper()
	var payload map[string]any
	require.NoError(e.t, json.Unmarshal(fixture(e.t, "block_actions.message.json"), &payload))
	payload["user"].(map[string]any)["id"] = user
	fromOurWorkspace(payload)
	payload["container"] = map[string]any{"type": "message", "message_ts": m.TS, "channel_id": m.Channel, "is_ephemeral": false}
	payload["channel"] = map[string]any{"id": m.Channel, "name": "eng"}
	msg := payload["message"].(map[string]any)
	msg["ts"], msg["text"], msg["blocks"] = m.TS, m.Text, json.RawMessage(m.Blocks)
	act := payload["actions"].([]any)[0].(map[string]any)
	for k, v := range action {
		act[k] = v
	}
	resp := e.slack.ResponseURL()
	payload["response_url"] = resp
	b, _ := json.Marshal(payload)
	status, body := e.send(e.signed(selfservice.PathInteractivity, "application/x-www-form-urlencoded", []byte(url.Values{"payload": {string(b)}}.Encode())))
	require.Equal(e.t, 200, status, "the click: %s", body)
	return resp
}

// answer waits for the ephemeral answer on resp and returns it.
func (e *env) answer(resp string) string {
	e.t.Helper()
	var got string
	require.Eventually(e.t, func() bool {
		for _, r := range e.slack.Responses() {
			if r.URL == resp && r.ResponseType == "ephemeral" {
				got = r.Text
				return true
			}
		}
		return false
	}, 5*time.Second, 5*time.Millisecond, "the answer on the response_url")
	return got
}

// TestAnswerClickShowsTheAnswer: Going on a reminder is answered with
// Alice's own answer to the event the button names; the message then
// shows it (its metadata kept, its Going marked), she is told on the
// response_url, the calendar is read again after the message shows it,
// and her Home tab is not republished.
func TestAnswerClickShowsTheAnswer(t *testing.T) {
	ans := &fakeAnswers{result: meetingbot.Answered{Title: "Planning", Was: meetingbot.ResponseNeedsAction}}
	e := newEnv(t, func(c *selfservice.Config) { c.Answers = ans })
	m := e.reminderOf(action.RSVP{Calendar: "alice@example.com", Event: "plan1"})
	resp := e.clickOn(alice, m, map[string]any{"action_id": action.RSVPGoing, "block_id": action.RSVPBlock, "value": action.RSVPValue(action.RSVP{Calendar: "alice@example.com", Event: "plan1"})})
	assert.Equal(t, "Going to *Planning*: I told Google.", e.answer(resp))
	asked, _ := ans.seen()
	assert.Equal(t, []string{alice + "|alice@example.com|plan1|accepted"}, asked, "the answers asked for")
	require.Eventually(t, func() bool { _, r := ans.seen(); return len(r) == 1 }, 5*time.Second, 5*time.Millisecond, "the calendar read again")
	_, refreshed := ans.seen()
	assert.Equal(t, []string{"alice@example.com"}, refreshed)

	got := e.message(m.TS)
	body := texts(got.Blocks)
	assert.Contains(t, body, "Your answer: *Going*", "the message clicked after the answer")
	assert.NotContains(t, body, "haven't answered")
	var blocks slack.Blocks
	require.NoError(t, json.Unmarshal(got.Blocks, &blocks))
	styles := map[string]slack.Style{}
	for _, b := range blocks.BlockSet {
		if a, ok := b.(*slack.ActionBlock); ok {
			for _, el := range a.Elements.ElementSet {
				btn := el.(*slack.ButtonBlockElement)
				styles[btn.ActionID] = btn.Style
			}
		}
	}
	assert.Equal(t, map[string]slack.Style{action.RSVPGoing: slack.StylePrimary, action.RSVPMaybe: "", action.RSVPNo: ""}, styles, "the buttons' styles")
	require.NotNil(t, got.Metadata, "the message's metadata after the edit")
	assert.Equal(t, "plan1:10m:x", got.Metadata.EventPayload["key"])
	assert.Equal(t, got.Text, m.Text, "the text fallback stays")
	assert.Empty(t, e.slack.HomeViews(), "Home tab published after an answer on a message")

	// No, then No again: declined, then nothing changed.
	ans.mu.Lock()
	ans.result.Was = meetingbot.ResponseAccepted
	ans.mu.Unlock()
	resp = e.clickOn(alice, e.message(m.TS), map[string]any{"action_id": action.RSVPNo, "value": action.RSVPValue(action.RSVP{Calendar: "alice@example.com", Event: "plan1"})})
	assert.Equal(t, "You declined *Planning*: I told Google, and I won't remind you of it.", e.answer(resp))
	assert.Contains(t, texts(e.message(m.TS).Blocks), "*You declined*")
	ans.mu.Lock()
	ans.result.Was = meetingbot.ResponseDeclined
	ans.mu.Unlock()
	resp = e.clickOn(alice, e.message(m.TS), map[string]any{"action_id": action.RSVPNo, "value": action.RSVPValue(action.RSVP{Calendar: "alice@example.com", Event: "plan1"})})
	assert.Equal(t, "You had answered no to *Planning* already, so nothing changed.", e.answer(resp))
	time.Sleep(50 * time.Millisecond)
	if _, refreshed := ans.seen(); len(refreshed) != 2 {
		t.Errorf("calendar read again %d times, want 2: an answer that changes nothing reads nothing", len(refreshed))
	}
}

// TestAnswerErrorsSayWhatToDo: an answer that cannot be given tells the
// clicker why and what to do, with the link that grants what is missing
// where that is the fix; the message is left as it was and nothing is
// read again.
func TestAnswerErrorsSayWhatToDo(t *testing.T) {
	link := "https://bot.example.com/google/oauth/start?t=write-" + alice + "-1"
	for _, tt := range []struct {
		name string
		err  error
		want []string
	}{
		{"read-only grant", meetingbot.Permanent(fmt.Errorf("x: %w", meetingbot.ErrNeedsWrite)), []string{"let me change your answers to invitations", "<" + link + "|Allow answering from Slack>", "Then click again."}},
		{"not connected", meetingbot.Permanent(meetingbot.ErrNotConnected), []string{"connect your Google account", "<" + link + "|Connect Google Calendar>"}},
		{"revoked", meetingbot.Permanent(meetingbot.ErrConnectionBroken), []string{"Your Google connection stopped", "<" + link + "|Reconnect Google Calendar>"}},
		{"read-only calendar", meetingbot.Permanent(fmt.Errorf("x: %w", meetingbot.ErrCannotEdit)), []string{"you may only read it there", "Answer in Google Calendar instead."}},
		{"organiser", meetingbot.Permanent(meetingbot.ErrNotInvited), []string{"You organise that meeting", "invited through a group"}},
		{"deleted", meetingbot.Permanent(fmt.Errorf("x: %w", meetingbot.ErrGone)), []string{"That meeting was deleted or cancelled"}},
		{"someone else's calendar", meetingbot.Permanent(meetingbot.ErrNotYourCalendar), []string{"answers for someone else's calendar"}},
		{"Google unreachable", errors.New("events.get: 503"), []string{"Click again in a moment."}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ans := &fakeAnswers{err: tt.err}
			e := newEnv(t, func(c *selfservice.Config) { c.Answers = ans })
			target := action.RSVP{Calendar: "alice@example.com", Event: "plan1"}
			m := e.reminderOf(target)
			got := e.answer(e.clickOn(alice, m, map[string]any{"action_id": action.RSVPMaybe, "value": action.RSVPValue(target)}))
			for _, w := range tt.want {
				assert.Contains(t, got, w, "the answer to a click that failed with %v", tt.err)
			}
			assert.Equal(t, string(m.Blocks), string(e.message(m.TS).Blocks), "the message after a failed answer")
			if _, refreshed := ans.seen(); len(refreshed) != 0 {
				t.Errorf("calendar read again after a failed answer: %v", refreshed)
			}
		})
	}
}

// TestAnswerMenuOfADigestLine: a digest line's menu answers with the
// option chosen, and the line's menu then shows it; the other lines stay.
func TestAnswerMenuOfADigestLine(t *testing.T) {
	ans := &fakeAnswers{result: meetingbot.Answered{Title: "Review", Was: meetingbot.ResponseNeedsAction, Series: true}}
	e := newEnv(t, func(c *selfservice.Config) { c.Answers = ans })
	line := func(i int, event string) slack.Block {
		var opts []*slack.OptionBlockObject
		for _, o := range []struct {
			r     meetingbot.Response
			label string
		}{{meetingbot.ResponseAccepted, "Going"}, {meetingbot.ResponseTentative, "Maybe"}, {meetingbot.ResponseDeclined, "No"}} {
			opts = append(opts, slack.NewOptionBlockObject(action.RSVPOption(event, o.r), slack.NewTextBlockObject(slack.PlainTextType, o.label, false, false), nil))
		}
		menu := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, slack.NewTextBlockObject(slack.PlainTextType, "Answer", false, false), action.RSVPMenu, opts...)
		return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "*"+event+"*", false, true), nil, slack.NewAccessory(menu), slack.SectionBlockOptionBlockID(fmt.Sprintf("invite_%d", i)))
	}
	_, ts, err := e.cfg.Slack.PostMessage(eng, slack.MsgOptionText("2 new invitations", false), slack.MsgOptionBlocks(line(0, "review"), line(1, "retro")))
	require.NoError(t, err)
	m := e.message(ts)
	chosen := map[string]any{"text": map[string]any{"type": "plain_text", "text": "Maybe"}, "value": action.RSVPOption("retro", meetingbot.ResponseTentative)}
	resp := e.clickOn(alice, m, map[string]any{"type": "static_select", "action_id": action.RSVPMenu, "block_id": "invite_1", "selected_option": chosen, "value": nil})
	assert.Equal(t, "Maybe to *Review* (every occurrence): I told Google.", e.answer(resp))
	asked, _ := ans.seen()
	assert.Equal(t, []string{alice + "||retro|tentative"}, asked, "the answer asked for: her own calendar's event, the option's answer")
	var blocks slack.Blocks
	require.NoError(t, json.Unmarshal(e.message(ts).Blocks, &blocks))
	initial := map[string]string{}
	for _, b := range blocks.BlockSet {
		sec := b.(*slack.SectionBlock)
		if io := sec.Accessory.SelectElement.InitialOption; io != nil {
			initial[sec.BlockID] = io.Text.Text
		}
	}
	assert.Equal(t, map[string]string{"invite_1": "Maybe"}, initial, "the menus' chosen options after the answer")
}

// TestAnswerClickOverSocketMode: over Socket Mode the click is
// acknowledged, then answered.
func TestAnswerClickOverSocketMode(t *testing.T) {
	ans := &fakeAnswers{result: meetingbot.Answered{Title: "Planning", Was: meetingbot.ResponseNeedsAction}}
	e := newEnv(t, func(c *selfservice.Config) { c.Answers = ans })
	ctx, cancel, done := e.socket(slacktest.AppToken)
	defer func() { cancel(); <-done }()
	require.NoError(t, e.slack.WaitSocket(ctx, 1))
	target := action.RSVP{Calendar: "alice@example.com", Event: "plan1"}
	m := e.reminderOf(target)
	var cb map[string]any
	require.NoError(t, json.Unmarshal(fixture(t, "block_actions.message.json"), &cb))
	cb["user"].(map[string]any)["id"] = alice
	fromOurWorkspace(cb)
	resp := e.slack.ResponseURL()
	cb["response_url"] = resp
	cb["container"] = map[string]any{"type": "message", "message_ts": m.TS, "channel_id": eng}
	cb["message"].(map[string]any)["ts"], cb["message"].(map[string]any)["blocks"] = m.TS, json.RawMessage(m.Blocks)
	act := cb["actions"].([]any)[0].(map[string]any)
	act["action_id"], act["value"] = action.RSVPNo, action.RSVPValue(target)
	id, err := e.slack.SendEnvelope(slacktest.Envelope{Type: "interactive", Payload: cb})
	require.NoError(t, err)
	_, err = e.slack.WaitAck(ctx, id)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(e.answer(resp), "You declined *Planning*"), "the answer over Socket Mode")
	assert.Contains(t, texts(e.message(m.TS).Blocks), "*You declined*")
}
