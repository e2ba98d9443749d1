package monitor_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

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
	if status != http.StatusOK {
		t.Errorf("GET /healthz = %d, want 200: a bad destination must not fail the health check", status)
	}
	for _, want := range []string{"ok: 2 subscriptions swept", "attention: 1 of 2 subscriptions cannot reach their Slack destination", "subscription team@example.com=#eng: " + fix} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /healthz body = %q, want it to contain %q", body, want)
		}
	}
	_, metrics := get(t, srv.URL+"/metrics")
	for _, want := range []string{`meetingbot_destination_unusable{subscription="team@example.com=#eng"} 1`, `meetingbot_destination_unusable{subscription="alice@example.com"} 0`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("GET /metrics lacks %q", want)
		}
	}

	m.Destination(team, errors.New("conversations.list: slack server error: 503"))
	if _, body := get(t, srv.URL+"/healthz"); !strings.Contains(body, fix) {
		t.Errorf("after a transient failure, GET /healthz body = %q; want the permanent failure still listed", body)
	}
	m.Destination(team, nil)
	if _, body := get(t, srv.URL+"/healthz"); strings.Contains(body, "attention") {
		t.Errorf("after a good check, GET /healthz body = %q; want no attention line", body)
	}
}
