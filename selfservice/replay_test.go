package selfservice_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot/selfservice"
)

// A captured request cannot be replayed by writing its signature's hex in
// another case: "v0=ABCD…" decodes to the same MAC as "v0=abcd…", and what
// was verified is the MAC, not the header's text. Nor in mixed case.
func TestReplayWithTheSignatureInAnotherCaseIsRefused(t *testing.T) {
	e := newEnv(t)
	good := e.signed(selfservice.PathCommands, "application/x-www-form-urlencoded", e.commandForm(alice, eng, "offsets 5m"))
	status, reply := e.send(good)
	require.Equal(t, http.StatusOK, status, reply)
	require.Contains(t, reply, "Saved: 5m before")

	hex := strings.TrimPrefix(good.header.Get("X-Slack-Signature"), "v0=")
	mixed := []byte(hex)
	for i := 0; i < len(mixed); i += 2 {
		mixed[i] = strings.ToUpper(string(mixed[i]))[0]
	}
	for name, sig := range map[string]string{"upper case": strings.ToUpper(hex), "mixed case": string(mixed)} {
		replay := good
		replay.header = good.header.Clone()
		replay.header.Set("X-Slack-Signature", "v0="+sig)
		status, reply := e.send(replay)
		assert.Equal(t, http.StatusUnauthorized, status, "the request replayed with its signature in %s: %s", name, reply)
	}
}

// Replicas share what they verified (the store keeps it): a request taken
// by one bot is refused by another on the same database, as by itself.
func TestReplayOnAnotherReplicaIsRefused(t *testing.T) {
	e := newEnv(t)
	other, err := selfservice.New(e.cfg) // a second bot on the same store
	require.NoError(t, err)
	t.Cleanup(other.Close)
	h, err := other.Handler(secret)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/slack/", h)
	second := httptest.NewServer(mux)
	t.Cleanup(second.Close)

	good := e.signed(selfservice.PathCommands, "application/x-www-form-urlencoded", e.commandForm(alice, eng, "on"))
	status, reply := e.send(good)
	require.Equal(t, http.StatusOK, status, reply)
	require.Len(t, e.subs(), 1)
	require.Contains(t, e.command(alice, eng, "off"), "Off.")

	first := e.server
	e.server = second
	defer func() { e.server = first }()
	status, reply = e.send(good)
	assert.Equal(t, http.StatusUnauthorized, status, "the request replayed to another replica: %s", reply)
	assert.Empty(t, e.subs(), "the replay turned nothing on")
}

// A request the store cannot check against those already taken is
// answered 503, which Slack retries, and has no effect.
func TestRequestUncheckedWhenTheStoreFails(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, e.store.Close())
	status, reply := e.send(e.signed(selfservice.PathCommands, "application/x-www-form-urlencoded", e.commandForm(alice, eng, "on")))
	assert.Equal(t, http.StatusServiceUnavailable, status, reply)
	assert.NotContains(t, reply, "sql", "the store's error stays in the log")
	assert.Zero(t, e.cals.readCount(), "an unchecked request reads no calendar")
}
