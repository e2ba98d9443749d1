package selfservice_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/selfservice"
)

// socket connects the app to the local Slack over Socket Mode with token
// and returns a context bounding the test and the end of RunSocketMode.
func (e *env) socket(token string) (context.Context, context.CancelFunc, chan error) {
	e.t.Helper()
	api := slack.New(slacktest.Token, slack.OptionAPIURL(e.slack.URL()), slack.OptionAppLevelToken(token))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	done := make(chan error, 1)
	go func() { done <- e.app.RunSocketMode(ctx, socketmode.New(api)) }()
	e.t.Cleanup(cancel)
	return ctx, cancel, done
}

// envelope builds a Socket Mode payload from one of Slack's documented
// envelopes, with fields of its payload replaced.
func envelopePayload(t *testing.T, name string, set map[string]any) map[string]any {
	t.Helper()
	var env struct{ Payload map[string]any }
	require.NoError(t, json.Unmarshal(fixture(t, name), &env))
	env.Payload["team_id"], env.Payload["api_app_id"] = slacktest.TeamID, slacktest.AppID
	for k, v := range set {
		env.Payload[k] = v
	}
	return env.Payload
}

func ackText(t *testing.T, ack slacktest.Ack) string {
	t.Helper()
	var reply struct {
		ResponseType string `json:"response_type"`
		Text         string `json:"text"`
	}
	require.NoError(t, json.Unmarshal(ack.Payload, &reply), "ack payload %s", ack.Payload)
	assert.Equal(t, "ephemeral", reply.ResponseType)
	return reply.Text
}

func TestSocketModeServesTheSameHandlers(t *testing.T) {
	e := newEnv(t)
	ctx, cancel, done := e.socket(slacktest.AppToken)
	require.NoError(t, e.slack.WaitSocket(ctx, 1))

	// A slash command: its reply rides on the ack.
	cmd := envelopePayload(t, "socket.slash_commands.json", map[string]any{
		"user_id": alice, "channel_id": eng, "channel_name": "eng", "command": "/meetingbot", "text": "on",
		"team_id": slacktest.TeamID, "response_url": e.slack.ResponseURL(),
	})
	id, err := e.slack.SendEnvelope(slacktest.Envelope{Type: "slash_commands", Payload: cmd, AcceptsResponsePayload: true})
	require.NoError(t, err)
	ack, err := e.slack.WaitAck(ctx, id)
	require.NoError(t, err)
	assert.Contains(t, ackText(t, ack), "On. Next reminder: *Weekly sync* at "+dateOf(weekly.Start.Add(-10*time.Minute)))
	require.Len(t, e.subs(), 1, "the same subscription as over HTTP")

	// An Events API envelope: acknowledged, then the Home tab published.
	var events struct{ Payload map[string]any }
	require.NoError(t, json.Unmarshal(fixture(t, "socket.events_api.json"), &events))
	events.Payload["event"].(map[string]any)["user"] = alice
	fromOurWorkspace(events.Payload)
	id, err = e.slack.SendEnvelope(slacktest.Envelope{Type: "events_api", Payload: events.Payload})
	require.NoError(t, err)
	ack, err = e.slack.WaitAck(ctx, id)
	require.NoError(t, err)
	assert.Nil(t, ack.Payload, "an event's ack carries nothing")
	assert.Contains(t, e.home(alice, 1), "*Reminders: on.*")

	// An interaction: the Home tab's "Turn off".
	var cb map[string]any
	require.NoError(t, json.Unmarshal(fixture(t, "block_actions.home.json"), &cb))
	cb["user"].(map[string]any)["id"] = alice
	fromOurWorkspace(cb)
	cb["actions"].([]any)[0].(map[string]any)["action_id"] = "home_off"
	id, err = e.slack.SendEnvelope(slacktest.Envelope{Type: "interactive", Payload: cb})
	require.NoError(t, err)
	_, err = e.slack.WaitAck(ctx, id)
	require.NoError(t, err)
	assert.Contains(t, e.home(alice, 2), "*Reminders: off.*")
	assert.Empty(t, e.subs())

	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err, "RunSocketMode after its context ended")
	case <-time.After(10 * time.Second):
		t.Fatal("RunSocketMode did not return after its context ended")
	}
}

func TestSocketModeAcksSlowCommandsInTime(t *testing.T) {
	e := newEnv(t, func(c *selfservice.Config) { c.AckWithin = 50 * time.Millisecond })
	ctx, _, _ := e.socket(slacktest.AppToken)
	require.NoError(t, e.slack.WaitSocket(ctx, 1))
	release := e.cals.hold()

	cmd := envelopePayload(t, "socket.slash_commands.json", map[string]any{
		"user_id": carol, "channel_id": eng, "channel_name": "eng", "command": "/meetingbot",
		"text": "subscribe " + team, "response_url": e.slack.ResponseURL(),
	})
	sent := time.Now()
	id, err := e.slack.SendEnvelope(slacktest.Envelope{Type: "slash_commands", Payload: cmd, AcceptsResponsePayload: true})
	require.NoError(t, err)
	ack, err := e.slack.WaitAck(ctx, id)
	require.NoError(t, err)
	assert.Less(t, time.Since(sent), 3*time.Second, "acknowledged within 3s")
	assert.Contains(t, ackText(t, ack), "One moment: I'm reading the calendar")

	release()
	require.Eventually(t, func() bool { return len(e.slack.Responses()) == 1 }, 5*time.Second, 5*time.Millisecond)
	assert.Contains(t, e.slack.Responses()[0].Text, "Subscribed: I'll post the reminders of "+team)
	assert.Len(t, e.subs(), 1)
}

func TestSocketModeStopsOnARefusedAppToken(t *testing.T) {
	e := newEnv(t)
	_, _, done := e.socket("xapp-1-A0APP00001-revoked")
	select {
	case err := <-done:
		require.Error(t, err)
		assert.Contains(t, err.Error(), "invalid_auth")
	case <-time.After(10 * time.Second):
		t.Fatal("RunSocketMode kept going with a refused token")
	}
}
