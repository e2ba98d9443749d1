package notify_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

func TestErrorClassification(t *testing.T) {
	tests := []struct {
		name      string
		dest      string
		method    string          // method to fail, "" for none
		fault     slacktest.Fault // queued once per attempt
		permanent bool
		wantClass string
		wantMsg   string
	}{
		// The emulator's own state produces these, as Slack would.
		{"not in channel", "#random", "", slacktest.Fault{}, true, "permanent", "invite the bot to #random: /invite @meetingbot"},
		{"no such channel name", "#nope", "", slacktest.Fault{}, true, "", "no channel named #nope is visible to the bot"},
		{"no such channel ID", "C0NOPE0001", "", slacktest.Fault{}, true, "permanent", "channel_not_found: check the channel ID in CALENDARS"},
		{"archived", "C0OLD00001", "", slacktest.Fault{}, true, "permanent", "channel C0OLD00001 is archived"},
		{"no user with email", "nobody@example.com", "", slacktest.Fault{}, true, "permanent", "no active Slack user has the email nobody@example.com (not in the workspace, or deactivated): set a destination in CALENDARS"},
		{"no user with ID", "U0NOBODY01", "", slacktest.Fault{}, true, "permanent", "no Slack user U0NOBODY01"},
		{"bad destination", "standup", "", slacktest.Fault{}, true, "", `destination "standup" is not a channel ID`},
		// Injected Slack errors.
		{"invalid_auth", "C0STANDUP1", "chat.postMessage", slacktest.Fault{Error: "invalid_auth"}, true, "permanent", "SLACK_BOT_TOKEN was rejected by Slack (invalid_auth)"},
		{"account_inactive", "C0STANDUP1", "chat.postMessage", slacktest.Fault{Error: "account_inactive"}, true, "permanent", "reinstall the app"},
		{"token_revoked", "C0STANDUP1", "chat.postMessage", slacktest.Fault{Error: "token_revoked"}, true, "permanent", "reinstall the app"},
		{"missing_scope email", "alice@example.com", "users.lookupByEmail", slacktest.Fault{Error: "missing_scope"}, true, "permanent", "add the users:read.email scope and reinstall the app"},
		{"missing_scope post", "C0STANDUP1", "chat.postMessage", slacktest.Fault{Error: "missing_scope"}, true, "permanent", "add the chat:write scope and reinstall the app"},
		{"no_permission", "C0STANDUP1", "chat.postMessage", slacktest.Fault{Error: "no_permission"}, true, "permanent", "the bot may not post to channel C0STANDUP1"},
		{"users_not_found", "alice@example.com", "users.lookupByEmail", slacktest.Fault{Error: "users_not_found"}, true, "permanent", "no active Slack user has the email alice@example.com"},
		{"user_not_found", "U0ALICE001", "conversations.open", slacktest.Fault{Error: "user_not_found"}, true, "permanent", "no Slack user U0ALICE001"},
		{"channel_not_found", "C0STANDUP1", "chat.postMessage", slacktest.Fault{Error: "channel_not_found"}, true, "permanent", "check the channel ID"},
		{"not_in_channel", "#standup", "chat.postMessage", slacktest.Fault{Error: "not_in_channel"}, true, "permanent", "/invite @meetingbot"},
		{"is_archived", "#standup", "chat.postMessage", slacktest.Fault{Error: "is_archived"}, true, "permanent", "#standup is archived"},
		{"unknown code", "C0STANDUP1", "chat.postMessage", slacktest.Fault{Error: "invalid_blocks"}, true, "permanent", "invalid_blocks"},
		// Transient: retried, and still not permanent when retries run out.
		{"429", "C0STANDUP1", "chat.postMessage", slacktest.Fault{Status: 429, RetryAfter: 1}, false, "rate_limited", "rate limit"},
		{"500", "C0STANDUP1", "chat.postMessage", slacktest.Fault{Status: 500}, false, "server_error", "500"},
		{"503 lookup", "bob@example.com", "users.lookupByEmail", slacktest.Fault{Status: 503}, false, "server_error", "503"},
		{"internal_error", "C0STANDUP1", "chat.postMessage", slacktest.Fault{Error: "internal_error"}, false, "server_error", "internal_error"},
		{"timeout", "C0STANDUP1", "chat.postMessage", slacktest.Fault{Status: 500, Delay: 5 * time.Second}, false, "network", "deadline exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(c *notify.Config) { c.Retry.MaxAttempts, c.CallTimeout = 2, 100*time.Millisecond })
			if tt.method != "" {
				e.srv.Fail(tt.method, "", tt.fault, tt.fault)
			}
			_, err := e.slack.Notify(context.Background(), reminder(sub(tt.dest), meeting(), 10*time.Minute))
			if err == nil {
				t.Fatalf("Notify(%s) = nil error, want one", tt.name)
			}
			if got := meetingbot.IsPermanent(err); got != tt.permanent {
				t.Errorf("IsPermanent(%v) = %v, want %v", err, got, tt.permanent)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) || !strings.Contains(err.Error(), `subscription "team"`) {
				t.Errorf("Notify(%s) error = %q, want it to name the subscription and contain %q", tt.name, err, tt.wantMsg)
			}
			var last string
			for _, o := range e.obs.all() {
				if tt.method == "" || strings.HasPrefix(o, tt.method+" ") {
					last = o
				}
			}
			if tt.wantClass != "" && !strings.HasSuffix(last, " "+tt.wantClass) {
				t.Errorf("Observe calls = %v, want the last %s one %q", e.obs.all(), tt.method, tt.wantClass)
			}
			if len(e.srv.Messages()) != 0 {
				t.Errorf("messages = %v, want none", e.srv.Messages())
			}
		})
	}
}

func TestErrorsUnwrapToSlack(t *testing.T) {
	e := newEnv(t)
	e.srv.Fail("chat.postMessage", "", slacktest.Fault{Error: "not_in_channel"})
	_, err := e.slack.Notify(context.Background(), reminder(sub("C0STANDUP1"), meeting(), 10*time.Minute))
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) || se.Err != "not_in_channel" {
		t.Errorf("errors.As(%v, SlackErrorResponse) = %v, want not_in_channel", err, se.Err)
	}
}
