package slacktest_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// An emulator from NewInProcess answers the real client through its
// Client, without a socket: inside a synctest bubble its latency is the
// bubble's fake time.
func TestInProcessAnswersItsClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := slacktest.NewInProcess()
		defer s.Close()
		if !strings.HasPrefix(s.URL(), slacktest.InProcessURL+"/") {
			t.Errorf("URL() = %s, want it under %s", s.URL(), slacktest.InProcessURL)
		}
		s.AddUser(slacktest.User{ID: "U0ALICE001", Name: "alice", Email: "alice@example.com"})
		s.SetLatency(150 * time.Millisecond)
		api := slack.New(slacktest.Token, slack.OptionAPIURL(s.URL()), slack.OptionHTTPClient(s.Client()))
		dm, _, _, err := api.OpenConversationContext(context.Background(), &slack.OpenConversationParameters{Users: []string{"U0ALICE001"}})
		if err != nil {
			t.Fatalf("conversations.open: %v", err)
		}
		start := time.Now()
		_, ts, err := api.PostMessageContext(context.Background(), dm.ID, slack.MsgOptionText("hello", false))
		if err != nil || ts == "" {
			t.Fatalf("chat.postMessage = %q, %v; want a ts", ts, err)
		}
		if took := time.Since(start); took != 150*time.Millisecond {
			t.Errorf("chat.postMessage took %v of fake time, want the latency, 150ms", took)
		}
		if ms := s.Messages(); len(ms) != 1 || ms[0].Text != "hello" {
			t.Errorf("Messages() = %+v, want hello", ms)
		}
	})
}
