package selfservice_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/selfservice"
)

// TestOnlySignedFreshRequestsHaveAnEffect sends "/meetingbot on" the way
// Slack would and the ways an attacker could, and checks that only Slack's
// own request turns Alice's reminders on, once.
func TestOnlySignedFreshRequestsHaveAnEffect(t *testing.T) {
	e := newEnv(t)
	form := "application/x-www-form-urlencoded"
	body := e.commandForm(alice, eng, "on")
	good := e.signed(selfservice.PathCommands, form, body)

	tampered := good
	tampered.body = []byte(strings.Replace(string(body), "text=on", "text=on+1h", 1))
	wrongKey := good
	wrongKey.header = good.header.Clone()
	req, _ := http.NewRequest(http.MethodPost, "/", nil)
	slacktest.Sign(req.Header, body, "not-the-signing-secret", e.clock.Now())
	wrongKey.header.Set("X-Slack-Signature", req.Header.Get("X-Slack-Signature"))
	unsigned := good
	unsigned.header = http.Header{}
	noPrefix := good
	noPrefix.header = good.header.Clone()
	noPrefix.header.Set("X-Slack-Signature", strings.TrimPrefix(good.header.Get("X-Slack-Signature"), "v0="))
	stale := signedAt(e, body, e.clock.Now().Add(-5*time.Minute-time.Second))
	future := signedAt(e, body, e.clock.Now().Add(5*time.Minute+time.Second))
	huge := e.commandForm(alice, eng, "on "+strings.Repeat("1m,", selfservice.MaxBody/3))
	oversized := e.signed(selfservice.PathCommands, form, huge)

	for _, tt := range []struct {
		name string
		req  signed
		want int
	}{
		{"a body changed after signing", tampered, http.StatusUnauthorized},
		{"signed with another secret", wrongKey, http.StatusUnauthorized},
		{"without Slack's headers", unsigned, http.StatusUnauthorized},
		{"a signature without v0=", noPrefix, http.StatusUnauthorized},
		{"a timestamp 5m1s old", stale, http.StatusUnauthorized},
		{"a timestamp 5m1s ahead", future, http.StatusUnauthorized},
		{"a body over 64 KiB", oversized, http.StatusRequestEntityTooLarge},
	} {
		status, reply := e.send(tt.req)
		assert.Equal(t, tt.want, status, "%s: status (%s)", tt.name, reply)
		assert.Empty(t, e.subs(), "%s: nothing is turned on", tt.name)
	}
	assert.Zero(t, e.cals.readCount(), "refused requests read no calendar")
	assert.Empty(t, e.slack.CallsTo("users.info"), "refused requests call no Slack method")

	status, reply := e.send(good)
	require.Equal(t, http.StatusOK, status, reply)
	require.Len(t, e.subs(), 1, "Slack's own request turns reminders on")

	// Alice turns them off; a captured copy of her "on" must not turn
	// them on again, within the 5 minutes or after.
	require.Contains(t, e.command(alice, eng, "off"), "Off.")
	status, _ = e.send(good)
	assert.Equal(t, http.StatusUnauthorized, status, "the same signed request again, at once")
	e.clock.Advance(5*time.Minute + time.Second)
	status, _ = e.send(good)
	assert.Equal(t, http.StatusUnauthorized, status, "the same signed request 5m1s later")
	assert.Empty(t, e.subs(), "replays turned nothing on")
}

func signedAt(e *env, body []byte, at time.Time) signed {
	req, _ := http.NewRequest(http.MethodPost, "/", nil)
	slacktest.Sign(req.Header, body, secret, at)
	return signed{path: selfservice.PathCommands, contentType: "application/x-www-form-urlencoded", body: body, header: req.Header}
}

func TestURLVerificationIsAnsweredWithTheChallenge(t *testing.T) {
	e := newEnv(t)
	body := fixture(t, "url_verification.json")
	var v struct{ Challenge string }
	require.NoError(t, json.Unmarshal(body, &v))

	status, got := e.send(e.signed(selfservice.PathEvents, "application/json", body))
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, v.Challenge, got, "the answer is the challenge")

	unsigned := signed{path: selfservice.PathEvents, contentType: "application/json", body: body, header: http.Header{}}
	status, got = e.send(unsigned)
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.NotContains(t, got, v.Challenge, "an unsigned challenge is not echoed")
}

func TestOnlyPostsToSlacksPaths(t *testing.T) {
	e := newEnv(t)
	resp, err := http.Get(e.server.URL + selfservice.PathCommands)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "GET %s", selfservice.PathCommands)
	status, _ := e.send(e.signed("/slack/other", "application/json", []byte("{}")))
	assert.Equal(t, http.StatusNotFound, status, "POST /slack/other")
}

// TestSlowCalendarIsAnsweredThroughTheResponseURL: Slack hears back
// within the ack budget even when Google is slow; the real answer
// follows through the response_url.
func TestSlowCalendarIsAnsweredThroughTheResponseURL(t *testing.T) {
	e := newEnv(t, func(c *selfservice.Config) { c.AckWithin = 50 * time.Millisecond })
	release := e.cals.hold()

	start := time.Now()
	reply := e.command(alice, eng, "on")
	took := time.Since(start)
	assert.Contains(t, reply, "One moment")
	assert.Less(t, took, 3*time.Second, "Slack was answered within 3s")
	assert.Empty(t, e.subs(), "nothing is stored before the calendar was read")

	release()
	require.Eventually(t, func() bool { return len(e.slack.Responses()) == 1 }, 5*time.Second, 5*time.Millisecond, "an answer through the response_url")
	r := e.slack.Responses()[0]
	assert.Equal(t, "ephemeral", r.ResponseType)
	assert.Contains(t, r.Text, "On. Next reminder: *Weekly sync* at "+dateOf(weekly.Start.Add(-10*time.Minute)))
	assert.Len(t, e.subs(), 1)
}
