package selfservice_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/selfservice"
)

// dmEvent is Slack's message.im example with the event's fields replaced
// (nil deletes one) and its own event_id.
func (e *env) dmEvent(eventID string, set map[string]any) []byte {
	e.t.Helper()
	var ev map[string]any
	require.NoError(e.t, json.Unmarshal(fixture(e.t, "message.im.json"), &ev))
	inner := ev["event"].(map[string]any)
	for k, v := range set {
		if v == nil {
			delete(inner, k)
		} else {
			inner[k] = v
		}
	}
	ev["event_id"] = eventID
	fromOurWorkspace(ev)
	b, err := json.Marshal(ev)
	require.NoError(e.t, err)
	return b
}

// postDM sends a message.im event as Slack does, with retry as its
// X-Slack-Retry-Num when above 0, and expects the 200 that acknowledges it.
func (e *env) postDM(body []byte, retry string) {
	e.t.Helper()
	e.clock.Advance(time.Second) // a new delivery is signed anew
	s := e.signed(selfservice.PathEvents, "application/json", body)
	if retry != "" {
		s.header.Set("X-Slack-Retry-Num", retry)
		s.header.Set("X-Slack-Retry-Reason", "http_timeout")
	}
	status, text := e.send(s)
	require.Equal(e.t, http.StatusOK, status, text)
}

// dmAnswers returns the bot's messages in a DM channel.
func (e *env) dmAnswers(channel string) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range e.slack.Messages() {
		if m.Channel == channel {
			out = append(out, m)
		}
	}
	return out
}

// openDM opens user's DM with the bot, as a reminder to them did, and
// returns its channel ID.
func (e *env) openDM(user string) string {
	e.t.Helper()
	api := slack.New(slacktest.Token, slack.OptionAPIURL(e.slack.URL()))
	ch, _, _, err := api.OpenConversation(&slack.OpenConversationParameters{Users: []string{user}})
	require.NoError(e.t, err)
	return ch.ID
}

// Someone who writes to the bot in its DM gets one short help answer there,
// saying which calendar their reminders come from and how to change or stop
// them; the same event delivered again, and more messages soon after, get
// nothing more.
func TestReplyToTheBotsDMGetsHelpOnce(t *testing.T) {
	e := newEnv(t)
	require.Equal(t, aliceD, e.openDM(alice))
	e.command(alice, aliceD, "on")

	reply := e.dmEvent("Ev0ALICE01", map[string]any{"user": alice, "channel": aliceD, "text": "thanks! can you remind me 5 min before instead?"})
	e.postDM(reply, "")
	require.Eventually(t, func() bool { return len(e.dmAnswers(aliceD)) == 1 }, 5*time.Second, 5*time.Millisecond, "one answer to Alice")
	e.postDM(reply, "") // the same event again, newly signed
	e.postDM(e.dmEvent("Ev0ALICE02", map[string]any{"user": alice, "channel": aliceD, "text": "hello?"}), "")
	e.app.Close() // waits for the handling of everything sent
	got := e.dmAnswers(aliceD)
	require.Len(t, got, 1, "answers in Alice's DM (none to a duplicate or to a second message within 10 minutes)")
	for _, want := range []string{"meeting reminder bot", "10m and 1m before each meeting on alice@example.com", "`/meetingbot off` stops these DMs", "`/meetingbot help`"} {
		assert.Contains(t, got[0].Text, want)
	}
}

// What is not a person's new message in the DM gets no answer.
func TestOnlyAPersonsDMIsAnswered(t *testing.T) {
	e := newEnv(t)
	require.Equal(t, aliceD, e.openDM(alice))
	for i, set := range []map[string]any{
		{"user": slacktest.BotUserID, "bot_id": slacktest.BotID, "channel": aliceD}, // the bot's own reminder
		{"user": "U0OTHERBOT", "bot_id": "B0OTHERBOT", "channel": aliceD},           // another bot
		{"user": alice, "channel": aliceD, "subtype": "message_changed"},            // an edit
		{"user": alice, "channel": eng, "channel_type": "channel"},                  // not a DM
	} {
		e.postDM(e.dmEvent(fmt.Sprintf("Ev0QUIET%02d", i), set), "")
	}
	e.app.Close()
	assert.Empty(t, e.slack.CallsTo("chat.postMessage"), "answers")
}

// After the quiet time, a new message is answered again, but an event
// already answered is not; someone without reminders is told how to turn
// them on.
func TestReplyToTheBotsDMAfterTheQuietTime(t *testing.T) {
	e := newEnv(t)
	bobD := e.openDM(bob)
	e.postDM(e.dmEvent("Ev0BOB0001", map[string]any{"user": bob, "channel": bobD}), "")
	require.Eventually(t, func() bool { return len(e.dmAnswers(bobD)) == 1 }, 5*time.Second, 5*time.Millisecond)
	assert.Contains(t, e.dmAnswers(bobD)[0].Text, "`/meetingbot on` turns on DMs before the meetings on your calendar")

	e.clock.Advance(11 * time.Minute)
	// The first event again, past the quiet time: still a duplicate.
	e.postDM(e.dmEvent("Ev0BOB0001", map[string]any{"user": bob, "channel": bobD}), "")
	require.Never(t, func() bool { return len(e.dmAnswers(bobD)) > 1 }, 300*time.Millisecond, 10*time.Millisecond, "an answer to a duplicate event_id")
	e.postDM(e.dmEvent("Ev0BOB0002", map[string]any{"user": bob, "channel": bobD, "thread_ts": "1355517523.000005"}), "")
	require.Eventually(t, func() bool { return len(e.dmAnswers(bobD)) == 2 }, 5*time.Second, 5*time.Millisecond, "answered again after 10 minutes")
	calls := e.slack.CallsTo("chat.postMessage")
	assert.Equal(t, "1355517523.000005", calls[len(calls)-1].Form.Get("thread_ts"), "a reply in a thread is answered in that thread")
}
