package e2e

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// Forged requests to the public HTTP_ADDR are counted in
// meetingbot_slack_requests_refused_total by reason, and logged in one
// line, not one each.
func TestForgedSlackRequestsAreCountedNotLoggedEach(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := start(t, w.dir, w.selfServiceEnv())
	addr := p.ready()
	body := []byte(slacktest.SlashCommand(bobID, "bob", bobDM, "directmessage", "on", w.slack.ResponseURL()).Encode())
	for range 20 {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/slack/commands", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		slacktest.Sign(req.Header, body, "a guessed secret", time.Now())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("forged /meetingbot on = %d, want 401", resp.StatusCode)
		}
	}
	_, metrics := httpGet("http://" + addr + "/metrics")
	if want := `meetingbot_slack_requests_refused_total{reason="signature"} 20`; !strings.Contains(metrics, want) {
		t.Errorf("/metrics lacks %s", want)
	}
	if n := strings.Count(p.out.String(), "refused requests to Slack's request URLs"); n != 1 {
		t.Errorf("log lines of 20 refusals within a minute = %d, want 1", n)
	}
}
