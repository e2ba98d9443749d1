package selfservice_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot/selfservice"
)

// clickWithView is a signed block_actions payload of Alice's "Turn on" in
// a Home tab whose view (which Slack sends whole with every click) has
// sections of about n bytes in all: a Home tab listing many muted series.
func (e *env) clickWithView(n int) signed {
	e.t.Helper()
	var cb map[string]any
	require.NoError(e.t, json.Unmarshal(fixture(e.t, "block_actions.home.json"), &cb))
	cb["user"].(map[string]any)["id"] = alice
	fromOurWorkspace(cb)
	var blocks []any
	for i := 0; i*1000 < n; i++ {
		blocks = append(blocks, map[string]any{
			"type": "section", "block_id": fmt.Sprintf("muted_%d", i),
			"text": map[string]any{"type": "mrkdwn", "text": "*" + strings.Repeat("Muted series ", 70) + "* in your DMs"},
			"accessory": map[string]any{"type": "button", "action_id": "unmute_series", "value": fmt.Sprintf(`{"subscription":"s","series":"series%04d"}`, i),
				"text": map[string]any{"type": "plain_text", "text": "Unmute"}},
		})
	}
	cb["view"].(map[string]any)["blocks"] = blocks
	b, err := json.Marshal(cb)
	require.NoError(e.t, err)
	return e.signed(selfservice.PathInteractivity, "application/x-www-form-urlencoded", []byte(url.Values{"payload": {string(b)}}.Encode()))
}

// A click in a Home tab whose view is large (Slack publishes no maximum;
// many muted series pass 64 KiB) is taken, up to 1 MiB, still verified
// before it is read; the other endpoints keep their 64 KiB bound.
func TestLargeInteractionPayloadsAreTaken(t *testing.T) {
	e := newEnv(t)
	big := e.clickWithView(300 << 10)
	require.Greater(t, len(big.body), 300<<10, "the payload's size")
	status, reply := e.send(big)
	require.Equal(t, http.StatusOK, status, "a %d KiB click: %s", len(big.body)>>10, reply)
	require.Eventually(t, func() bool { return len(e.subs()) == 1 }, 5*time.Second, 5*time.Millisecond, "the click turned reminders on")

	forged := e.clickWithView(300 << 10)
	forged.header.Set("X-Slack-Signature", "v0="+strings.Repeat("00", 32))
	status, _ = e.send(forged)
	assert.Equal(t, http.StatusUnauthorized, status, "a large click with a forged signature")

	huge := e.clickWithView(1 << 20)
	require.Greater(t, len(huge.body), selfservice.MaxInteractionBody)
	status, _ = e.send(huge)
	assert.Equal(t, http.StatusRequestEntityTooLarge, status, "a click over 1 MiB")

	command := e.signed(selfservice.PathCommands, "application/x-www-form-urlencoded", e.commandForm(alice, eng, "on "+strings.Repeat("1m,", 100<<10/3)))
	status, _ = e.send(command)
	assert.Equal(t, http.StatusRequestEntityTooLarge, status, "a 100 KiB slash command")
}
