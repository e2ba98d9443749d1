package selfservice_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/selfservice"
)

// The bot serves its own workspace and app only: auth.test names its team
// and bots.info its app. A request signed with the signing secret but for
// another workspace the app is installed in, or naming another app, is
// refused (403) and changes nothing, over HTTP and over Socket Mode.
func TestRequestsForAnotherWorkspaceOrAppAreRefused(t *testing.T) {
	e := newEnv(t)
	form := "application/x-www-form-urlencoded"
	command := func(team, app string) signed {
		f, err := url.ParseQuery(string(e.commandForm(alice, eng, "on")))
		require.NoError(t, err)
		f.Set("team_id", team)
		f.Set("api_app_id", app)
		e.clock.Advance(time.Second)
		return e.signed(selfservice.PathCommands, form, []byte(f.Encode()))
	}
	homeOpened := func(team, app string) signed {
		var ev map[string]any
		require.NoError(t, json.Unmarshal(fixture(t, "app_home_opened.json"), &ev))
		ev["event"].(map[string]any)["user"] = alice
		ev["team_id"], ev["api_app_id"], ev["event_id"] = team, app, "Ev0OTHER"+team+app
		b, _ := json.Marshal(ev)
		return e.signed(selfservice.PathEvents, "application/json", b)
	}
	click := func(team, app string) signed {
		var cb map[string]any
		require.NoError(t, json.Unmarshal(fixture(t, "block_actions.home.json"), &cb))
		cb["user"].(map[string]any)["id"] = alice
		cb["team"].(map[string]any)["id"], cb["api_app_id"] = team, app
		cb["actions"].([]any)[0].(map[string]any)["action_id"] = "home_on"
		b, _ := json.Marshal(cb)
		return e.signed(selfservice.PathInteractivity, form, []byte(url.Values{"payload": {string(b)}}.Encode()))
	}
	const otherTeam, otherApp = "T0OTHER001", "A0OTHER001"
	for _, tt := range []struct {
		name string
		req  signed
	}{
		{"a slash command from another workspace", command(otherTeam, slacktest.AppID)},
		{"a slash command for another app", command(slacktest.TeamID, otherApp)},
		{"an event from another workspace", homeOpened(otherTeam, slacktest.AppID)},
		{"an event for another app", homeOpened(slacktest.TeamID, otherApp)},
		{"a click from another workspace", click(otherTeam, slacktest.AppID)},
		{"a click for another app", click(slacktest.TeamID, otherApp)},
	} {
		status, reply := e.send(tt.req)
		assert.Equal(t, http.StatusForbidden, status, "%s: %s", tt.name, reply)
	}
	e.app.Close()
	assert.Empty(t, e.subs(), "nothing turned on")
	assert.Zero(t, len(e.slack.HomeViews()), "Home tabs published")
	assert.Zero(t, e.cals.readCount(), "no calendar read")
}

func TestSocketModeEnvelopesForAnotherWorkspaceAreRefused(t *testing.T) {
	e := newEnv(t)
	ctx, _, _ := e.socket(slacktest.AppToken)
	require.NoError(t, e.slack.WaitSocket(ctx, 1))
	cmd := envelopePayload(t, "socket.slash_commands.json", map[string]any{
		"user_id": alice, "channel_id": eng, "channel_name": "eng", "command": "/meetingbot", "text": "on",
		"team_id": "T0OTHER001", "response_url": e.slack.ResponseURL(),
	})
	id, err := e.slack.SendEnvelope(slacktest.Envelope{Type: "slash_commands", Payload: cmd, AcceptsResponsePayload: true})
	require.NoError(t, err)
	_, err = e.slack.WaitAck(ctx, id)
	require.NoError(t, err, "an envelope refused is still acknowledged, so that Slack does not send it again")

	var events struct{ Payload map[string]any }
	require.NoError(t, json.Unmarshal(fixture(t, "socket.events_api.json"), &events))
	events.Payload["event"].(map[string]any)["user"] = alice
	events.Payload["team_id"], events.Payload["api_app_id"] = slacktest.TeamID, "A0OTHER001"
	id, err = e.slack.SendEnvelope(slacktest.Envelope{Type: "events_api", Payload: events.Payload})
	require.NoError(t, err)
	_, err = e.slack.WaitAck(context.Background(), id)
	require.NoError(t, err)
	e.app.Close()
	assert.Empty(t, e.subs(), "nothing turned on")
	assert.Zero(t, len(e.slack.HomeViews()), "Home tabs published")
}

// While Slack cannot say who the bot is, a request cannot be checked: it
// is answered 503, which Slack retries, and Slack is asked again after a
// few seconds, not on every request.
func TestRequestWhileSlackCannotNameTheBotIsRetried(t *testing.T) {
	e := newEnv(t)
	e.slack.Fail("auth.test", "", slacktest.Fault{Error: "internal_error"})
	status, reply := e.send(e.signed(selfservice.PathCommands, "application/x-www-form-urlencoded", e.commandForm(alice, eng, "on")))
	assert.Equal(t, http.StatusServiceUnavailable, status, reply)
	e.clock.Advance(time.Second)
	status, _ = e.send(e.signed(selfservice.PathCommands, "application/x-www-form-urlencoded", e.commandForm(alice, eng, "on")))
	assert.Equal(t, http.StatusServiceUnavailable, status, "a second later")
	assert.Len(t, e.slack.CallsTo("auth.test"), 1, "auth.test calls within 5 seconds of a failure")
	assert.Empty(t, e.subs())

	e.clock.Advance(5 * time.Second)
	assert.Contains(t, e.command(alice, eng, "on"), "On.", "once Slack answers")
}

// A request that names no workspace and no app is served: Slack's own
// requests name both, and the signature binds them to this app's signing
// secret. A Web API that cannot name the bot's app (no bots.info, as a
// Slack-shaped server may lack it) leaves the app unchecked, once said,
// and the workspace still checked.
func TestRequestsCheckedForWhatSlackCanName(t *testing.T) {
	form := "application/x-www-form-urlencoded"
	command := func(e *env, team, app string) signed {
		f, err := url.ParseQuery(string(e.commandForm(alice, eng, "on")))
		require.NoError(t, err)
		f.Del("team_id")
		f.Del("api_app_id")
		if team != "" {
			f.Set("team_id", team)
		}
		if app != "" {
			f.Set("api_app_id", app)
		}
		e.clock.Advance(time.Second)
		return e.signed(selfservice.PathCommands, form, []byte(f.Encode()))
	}

	e := newEnv(t)
	status, reply := e.send(command(e, "", ""))
	assert.Equal(t, http.StatusOK, status, "a command naming neither workspace nor app: %s", reply)
	assert.Contains(t, reply, "On.", "a command naming neither workspace nor app")
	assert.Empty(t, e.slack.CallsTo("auth.test"), "auth.test calls for a request with nothing to check")

	e = newEnv(t)
	e.slack.Fail("bots.info", "", slacktest.Fault{Error: "unknown_method"})
	status, reply = e.send(command(e, slacktest.TeamID, "A0OTHER001"))
	assert.Equal(t, http.StatusOK, status, "with bots.info unknown, a command naming any app: %s", reply)
	status, _ = e.send(command(e, "T0OTHER001", slacktest.AppID))
	assert.Equal(t, http.StatusForbidden, status, "with bots.info unknown, a command from another workspace")
	e.clock.Advance(time.Minute)
	status, _ = e.send(command(e, slacktest.TeamID, slacktest.AppID))
	assert.Equal(t, http.StatusOK, status, "a minute later")
	assert.Len(t, e.slack.CallsTo("bots.info"), 1, "bots.info asked once: it will answer the same")
}
