package slacktest_test

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// TestLatencyIsConcurrent checks that a latency delays each call by
// itself: ten calls at once take about one latency, not ten, and a message
// is stored when its call took effect, after the latency.
func TestLatencyIsConcurrent(t *testing.T) {
	s := seeded(t)
	const latency, n = 300 * time.Millisecond, 10
	s.SetLatency(latency)
	began := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			form := url.Values{"token": {slacktest.Token}, "channel": {"C0GENERAL1"}, "text": {fmt.Sprint("message ", i)}}
			if _, body := post(t, s, "chat.postMessage", form); body["ok"] != true {
				t.Errorf("chat.postMessage = %v, want ok", body)
			}
		})
	}
	wg.Wait()
	took := time.Since(began)
	if took < latency || took >= n/2*latency {
		t.Errorf("%d calls at once with latency %v took %v, want at least %v and well under %v", n, latency, took, latency, n*latency)
	}
	msgs := s.Messages()
	if len(msgs) != n {
		t.Fatalf("messages = %d, want %d", len(msgs), n)
	}
	for _, m := range msgs {
		if d := m.Posted.Sub(began); d < latency {
			t.Errorf("message %q posted %v after the calls began, want at least the latency %v", m.Text, d, latency)
		}
	}
}

// TestAddUsersMany seeds thousands of users at once and finds each by email
// (in any case) and opens a DM with it, as a company-wide deployment does.
func TestAddUsersMany(t *testing.T) {
	s := seeded(t)
	const n = 3000
	users := make([]slacktest.User, n)
	for i := range users {
		users[i] = slacktest.User{ID: fmt.Sprintf("U%08d", i), Name: fmt.Sprint("u", i), Email: fmt.Sprintf("u%d@example.com", i)}
	}
	s.AddUsers(users...)
	for _, i := range []int{0, 1234, n - 1} {
		email := strings.ToUpper(users[i].Email)
		_, body := post(t, s, "users.lookupByEmail", url.Values{"token": {slacktest.Token}, "email": {email}})
		u, _ := body["user"].(map[string]any)
		if body["ok"] != true || u["id"] != users[i].ID {
			t.Errorf("users.lookupByEmail(%s) = %v, want user %s", email, body, users[i].ID)
			continue
		}
		_, body = post(t, s, "conversations.open", url.Values{"token": {slacktest.Token}, "users": {users[i].ID}})
		if body["ok"] != true {
			t.Errorf("conversations.open(%s) = %v, want ok", users[i].ID, body)
		}
	}
	if _, body := post(t, s, "users.lookupByEmail", url.Values{"token": {slacktest.Token}, "email": {"nobody@example.com"}}); body["error"] != "users_not_found" {
		t.Errorf("users.lookupByEmail(nobody) = %v, want users_not_found", body)
	}
	if _, body := post(t, s, "users.lookupByEmail", url.Values{"token": {slacktest.Token}, "email": {"alice@example.com"}}); body["ok"] != true {
		t.Errorf("users.lookupByEmail(alice) after AddUsers = %v, want ok", body)
	}
}
