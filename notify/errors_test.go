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
		{"documented permanent code", "C0STANDUP1", "chat.postMessage", slacktest.Fault{Error: "restricted_action_read_only_channel"}, true, "permanent", "restricted_action_read_only_channel"},
		{"conversations.open code", "U0ALICE001", "conversations.open", slacktest.Fault{Error: "user_disabled"}, true, "permanent", "user_disabled"},
		// Transient: retried, and still not permanent when retries run out.
		{"429", "C0STANDUP1", "chat.postMessage", slacktest.Fault{Status: 429, RetryAfter: 1}, false, "rate_limited", "rate limit"},
		{"500", "C0STANDUP1", "chat.postMessage", slacktest.Fault{Status: 500}, false, "server_error", "500"},
		{"503 lookup", "bob@example.com", "users.lookupByEmail", slacktest.Fault{Status: 503}, false, "server_error", "503"},
		{"internal_error", "C0STANDUP1", "chat.postMessage", slacktest.Fault{Error: "internal_error"}, false, "server_error", "internal_error"},
		{"rate_limited code", "C0STANDUP1", "chat.postMessage", slacktest.Fault{Error: "rate_limited"}, false, "rate_limited", "rate_limited"},
		{"message_limit_exceeded", "C0STANDUP1", "chat.postMessage", slacktest.Fault{Error: "message_limit_exceeded"}, false, "server_error", "message_limit_exceeded"},
		{"unknown code", "C0STANDUP1", "chat.postMessage", slacktest.Fault{Error: "some_new_condition"}, false, "server_error", "some_new_condition"},
		{"unknown lookup code", "bob@example.com", "users.lookupByEmail", slacktest.Fault{Error: "some_new_condition"}, false, "server_error", "some_new_condition"},
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

// A Slack error code not documented as needing a person is retried, within
// the retry policy, and the reminder is not lost for good.
func TestUnknownCodeRetriedThenDelivered(t *testing.T) {
	e := newEnv(t, func(c *notify.Config) { c.Retry.MaxAttempts = 3 })
	e.srv.Fail("chat.postMessage", "", slacktest.Fault{Error: "some_new_condition"}, slacktest.Fault{Error: "rate_limited"})
	rc, err := e.slack.Notify(context.Background(), reminder(sub("C0STANDUP1"), meeting(), 10*time.Minute))
	if err != nil || rc.TS == "" {
		t.Fatalf("Notify() = %+v, %v; want delivered on the third attempt", rc, err)
	}
	if n, m := len(e.srv.CallsTo("chat.postMessage")), len(e.srv.Messages()); n != 3 || m != 1 {
		t.Errorf("chat.postMessage calls, messages = %d, %d; want 3, 1", n, m)
	}
}

// When Slack refuses the blocks of a reminder, it goes out once more as a
// plain text message, which still says what and when and still carries
// the metadata that finds it again.
func TestRefusedBlocksFallBackToText(t *testing.T) {
	for _, code := range []string{"invalid_blocks", "msg_too_long", "msg_blocks_too_long"} {
		t.Run(code, func(t *testing.T) {
			e := newEnv(t)
			e.srv.Fail("chat.postMessage", "", slacktest.Fault{Error: code})
			r := reminder(sub("#standup"), meeting(), 10*time.Minute)
			rc, err := e.slack.Notify(context.Background(), r)
			if err != nil {
				t.Fatalf("Notify() error: %v", err)
			}
			msgs := e.srv.Messages()
			if len(msgs) != 1 || rc.TS != msgs[0].TS {
				t.Fatalf("Notify() = %+v with messages %+v, want the one fallback message", rc, msgs)
			}
			m := msgs[0]
			if m.Blocks != nil || !strings.HasPrefix(m.Text, "Weekly sync starts in 10 minutes (<!date^1772442000^") || !strings.Contains(m.Text, "https://meet.google.com/abc-defg-hij") {
				t.Errorf("fallback message = %q with blocks %s, want the title, the time and the join link as text alone", m.Text, m.Blocks)
			}
			if m.Metadata == nil || m.Metadata.EventPayload["key"] != r.Key {
				t.Errorf("fallback metadata = %+v, want the reminder's key", m.Metadata)
			}
			found, ok, err := e.slack.Delivered(context.Background(), r)
			if err != nil || !ok || found.TS != m.TS {
				t.Errorf("Delivered() = %+v, %v, %v; want the fallback message", found, ok, err)
			}
			if n := len(e.srv.CallsTo("chat.postMessage")); n != 2 {
				t.Errorf("chat.postMessage calls = %d, want 2 (the refused post and the text)", n)
			}
		})
	}
}

// Only one fallback: when Slack refuses the text too, the error says so
// and is permanent.
func TestRefusedFallbackGivesUp(t *testing.T) {
	e := newEnv(t)
	e.srv.Fail("chat.postMessage", "", slacktest.Fault{Error: "invalid_blocks"}, slacktest.Fault{Error: "msg_too_long"})
	_, err := e.slack.Notify(context.Background(), reminder(sub("#standup"), meeting(), 10*time.Minute))
	if !meetingbot.IsPermanent(err) || !strings.Contains(err.Error(), "msg_too_long") {
		t.Errorf("Notify() error = %v, want a permanent msg_too_long", err)
	}
	if n, m := len(e.srv.CallsTo("chat.postMessage")), len(e.srv.Messages()); n != 2 || m != 0 {
		t.Errorf("chat.postMessage calls, messages = %d, %d; want 2, 0", n, m)
	}
}
