package monitor_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/meetingbot/meetingbot"
)

// TestHealthzListsUnusableDestinations records a destination Slack refuses
// for good: /healthz names the subscription and the fix but stays 200, so a
// deploy's health check passes; a transient failure changes nothing; a
// good check clears the line.
func TestHealthzListsUnusableDestinations(t *testing.T) {
	m, _, srv := start(t)
	fix := "conversations.list to #eng: channel_not_found: no channel named #eng is visible to the bot: check the name in CALENDARS"
	m.Destination(alice, nil)
	m.Destination(team, meetingbot.Permanent(errors.New(fix)))

	status, body := get(t, srv.URL+"/healthz")
	assert.Equal(t, http.StatusOK, status, "GET /healthz: a bad destination must not fail the health check")
	for _, want := range []string{"ok: 2 subscriptions swept", "attention: 1 of 2 subscriptions cannot reach their Slack destination", "subscription team@example.com=#eng: " + fix} {
		assert.Contains(t, body, want, "GET /healthz body")
	}
	_, metrics := get(t, srv.URL+"/metrics")
	for _, want := range []string{`meetingbot_destination_unusable{subscription="team@example.com=#eng"} 1`, `meetingbot_destination_unusable{subscription="alice@example.com"} 0`} {
		assert.Contains(t, metrics, want, "GET /metrics")
	}

	m.Destination(team, errors.New("conversations.list: slack server error: 503"))
	_, body = get(t, srv.URL+"/healthz")
	assert.Contains(t, body, fix, "after a transient failure, GET /healthz still lists the permanent failure")
	m.Destination(team, nil)
	_, body = get(t, srv.URL+"/healthz")
	assert.NotContains(t, body, "attention", "after a good check, GET /healthz")
}
