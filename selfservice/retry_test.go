package selfservice_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/selfservice"
)

var eventIDs atomic.Int64

// nextEventID returns an event_id no other event of the tests has.
func nextEventID() string { return fmt.Sprintf("Ev%010d", eventIDs.Add(1)) }

// replica starts another bot's self-service on e's store (a replica, or
// the bot started again) and points e's requests at it.
func (e *env) replica() {
	e.t.Helper()
	app, err := selfservice.New(e.cfg)
	require.NoError(e.t, err)
	h, err := app.Handler(secret)
	require.NoError(e.t, err)
	mux := http.NewServeMux()
	mux.Handle("/slack/", h)
	srv := httptest.NewServer(mux)
	e.t.Cleanup(srv.Close)
	e.t.Cleanup(app.Close)
	e.app, e.server = app, srv
}

// A DM that reached a bot shutting down was answered 503 "Slack retries":
// the retry, on another replica or the bot started again, is answered.
// A retry of an event already handled is not, by any replica.
func TestRetryOfAnEventRefusedAtShutdownIsAnswered(t *testing.T) {
	e := newEnv(t)
	require.Equal(t, aliceD, e.openDM(alice))
	e.command(alice, aliceD, "on")
	dm := e.dmEvent("Ev0SHUTDOWN", map[string]any{"user": alice, "channel": aliceD, "text": "hi"})

	e.app.Close() // SIGTERM: the server still answers, the app takes no work
	e.clock.Advance(time.Second)
	status, text := e.send(e.signed(selfservice.PathEvents, "application/json", dm))
	require.Equal(t, http.StatusServiceUnavailable, status, "an event during shutdown: %s", text)

	e.replica()
	e.postDM(dm, "1")
	require.Eventually(t, func() bool { return len(e.dmAnswers(aliceD)) == 1 }, 5*time.Second, 5*time.Millisecond, "the retry is answered")

	e.postDM(dm, "2") // Slack retries again: the answer was slow, say
	e.replica()
	e.postDM(dm, "3")
	e.app.Close()
	assert.Len(t, e.dmAnswers(aliceD), 1, "answers in Alice's DM after retries of an event handled, on two bots")
}

// Over Socket Mode too, a retry (retry_attempt) of an event not handled
// yet is handled, and one of an event handled is not.
func TestSocketModeRetryOfAnEventNotHandledIsAnswered(t *testing.T) {
	e := newEnv(t)
	require.Equal(t, aliceD, e.openDM(alice))
	ctx, _, _ := e.socket(slacktest.AppToken)
	require.NoError(t, e.slack.WaitSocket(ctx, 1))
	var dm map[string]any
	require.NoError(t, json.Unmarshal(e.dmEvent("Ev0SOCKET1", map[string]any{"user": alice, "channel": aliceD}), &dm))
	for attempt := 1; attempt <= 2; attempt++ {
		id, err := e.slack.SendEnvelope(slacktest.Envelope{Type: "events_api", Payload: dm, RetryAttempt: attempt, RetryReason: "timeout"})
		require.NoError(t, err)
		_, err = e.slack.WaitAck(ctx, id)
		require.NoError(t, err, "retry %d acknowledged", attempt)
		if attempt == 1 {
			require.Eventually(t, func() bool { return len(e.dmAnswers(aliceD)) == 1 }, 5*time.Second, 5*time.Millisecond, "the first retry is answered")
		}
	}
	e.app.Close()
	assert.Len(t, e.dmAnswers(aliceD), 1, "answers after two retries of one event")
}
