package e2e

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
)

// Two bots on one PostgreSQL share what they took from Slack: a signed
// "/meetingbot on" taken by one is refused by the other when replayed
// there, within its 5 minutes, and with its signature in upper case too.
func TestReplicasRefuseARequestTheOtherTook(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.URL(t)
	w := newWorld(t)
	env := replicaEnv(w, dbURL, mapToList(w.selfServiceEnv("REMINDER_OFFSETS=5s"))...)
	a, b := start(t, w.dir, env), start(t, w.dir, env)
	addrA, addrB := a.ready(), b.ready()

	body := []byte(slacktest.SlashCommand(bobID, "bob", bobDM, "directmessage", "on", w.slack.ResponseURL()).Encode())
	header := http.Header{}
	slacktest.Sign(header, body, signingSecret, time.Now())
	post := func(addr string, h http.Header) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/slack/commands", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = h.Clone()
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatalf("POST /slack/commands: %v", err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(got)
	}
	if status, reply := post(addrA, header); status != http.StatusOK {
		t.Fatalf("/meetingbot on to the first replica = %d %s, want 200", status, reply)
	}
	if status, reply := post(addrB, header); status != http.StatusUnauthorized {
		t.Errorf("the same request replayed to the second replica = %d %s, want 401", status, reply)
	}
	upper := header.Clone()
	upper.Set("X-Slack-Signature", "v0="+strings.ToUpper(strings.TrimPrefix(header.Get("X-Slack-Signature"), "v0=")))
	if status, reply := post(addrB, upper); status != http.StatusUnauthorized {
		t.Errorf("the request replayed to the second replica, its signature in upper case = %d %s, want 401", status, reply)
	}
}

// mapToList turns an environment back into KEY=value overrides.
func mapToList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}
