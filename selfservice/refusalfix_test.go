package selfservice_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot/selfservice"
)

// A request signed with another secret is what every one of Slack's looks
// like when SLACK_SIGNING_SECRET is wrong: the log line says to check it,
// once a minute at most. Unsigned requests (anyone probing the port) need
// nothing of the operator.
func TestWrongSigningSecretIsNamed(t *testing.T) {
	logs := &lockedBuffer{}
	e := newEnv(t, func(c *selfservice.Config) { c.Logger = slog.New(slog.NewTextHandler(logs, nil)) })
	unsigned := e.signed(selfservice.PathCommands, "application/x-www-form-urlencoded", e.commandForm(alice, eng, "on"))
	unsigned.header = http.Header{}
	e.send(unsigned)
	got := logs.lines("refused")
	require.Len(t, got, 1)
	assert.NotContains(t, got[0], "SLACK_SIGNING_SECRET", "unsigned requests are not the operator's: %s", got[0])

	e.clock.Advance(time.Minute)
	forged := e.signed(selfservice.PathCommands, "application/x-www-form-urlencoded", e.commandForm(alice, eng, "on"))
	forged.header = forged.header.Clone()
	forged.header.Set("X-Slack-Signature", "v0="+strings.Repeat("cd", 32))
	for range 5 {
		status, _ := e.send(forged)
		require.Equal(t, http.StatusUnauthorized, status)
	}
	got = logs.lines("refused")
	require.Len(t, got, 2, "one line for the five, within the minute: %s", got)
	assert.Contains(t, got[1], "SLACK_SIGNING_SECRET is not this app's Signing Secret: copy it from the app's Basic Information page (App Credentials)")
}
