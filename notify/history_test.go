package notify_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

func TestDelivered(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	sent := reminder(sub("#standup"), meeting(), 10*time.Minute)
	rc, err := e.slack.Notify(ctx, sent)
	if err != nil {
		t.Fatal(err)
	}
	// Another app posting our event type with our key must not count.
	e.srv.AddMessage(slacktest.Message{Channel: "C0STANDUP1", Text: "imposter", User: "U0OTHER001", BotID: "B0OTHER001",
		Metadata: &slacktest.Metadata{EventType: notify.EventType, EventPayload: map[string]any{"key": "k-imposter", "subscription": "team"}}})
	moved := meeting()
	moved.Start = moved.Start.Add(time.Hour)
	imposter := reminder(sub("#standup"), meeting(), 5*time.Minute)
	imposter.Key = "k-imposter"
	otherSub := sent
	otherSub.Subscription.ID = "other"

	tests := []struct {
		name  string
		r     meetingbot.Reminder
		found bool
	}{
		{"the sent reminder", sent, true},
		{"same meeting, other offset", reminder(sub("#standup"), meeting(), time.Minute), false},
		{"moved meeting has a new key", reminder(sub("#standup"), moved, 10*time.Minute), false},
		{"same key, other subscription", otherSub, false},
		{"another app's message", imposter, false},
	}
	for _, tt := range tests {
		got, found, err := e.slack.Delivered(ctx, tt.r)
		if err != nil || found != tt.found {
			t.Errorf("Delivered(%s) = %+v, %v, %v, want found %v", tt.name, got, found, err, tt.found)
		}
		if tt.found && got != rc {
			t.Errorf("Delivered(%s) receipt = %+v, want %+v", tt.name, got, rc)
		}
	}
	calls := e.srv.CallsTo("conversations.history")
	if f := calls[0].Form; f.Get("include_all_metadata") != "1" || f.Get("oldest") == "" || f.Get("channel") != "C0STANDUP1" {
		t.Errorf("conversations.history form = %v, want include_all_metadata=1, oldest, channel", f)
	}
}

func TestDeliveredUnknown(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		dest  string
		fault *slacktest.Fault
		setup func(*env)
	}{
		{"missing scope", "#standup", &slacktest.Fault{Error: "missing_scope"}, nil},
		{"bot not in channel", "C0RANDOM01", nil, nil},
		{"channel gone", "C0NOPE0001", nil, nil},
		{"channel archived", "C0OLD00001", nil, nil},
		{"token revoked", "#standup", &slacktest.Fault{Error: "token_revoked"}, nil},
		{"history longer than the page bound", "#standup", nil, func(e *env) {
			for i := range 250 {
				e.srv.AddMessage(slacktest.Message{Channel: "C0STANDUP1", Text: fmt.Sprint("chatter ", i)})
			}
		}},
		{"destination gone", "nobody@example.com", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(c *notify.Config) { c.HistoryPages, c.Retry.MaxAttempts = 1, 1 })
			if tt.fault != nil {
				e.srv.Fail("conversations.history", "", *tt.fault)
			}
			r := reminder(sub(tt.dest), meeting(), 10*time.Minute)
			e.srv.AddMessage(slacktest.Message{Channel: "C0STANDUP1", Text: "ours, before the chatter",
				Metadata: &slacktest.Metadata{EventType: notify.EventType, EventPayload: map[string]any{"key": r.Key, "subscription": "team"}}})
			e.clock.Advance(time.Second)
			if tt.setup != nil {
				tt.setup(e)
			}
			_, found, err := e.slack.Delivered(ctx, r)
			if !errors.Is(err, meetingbot.ErrUnknown) || found {
				t.Errorf("Delivered(%s) = found %v, %v, want ErrUnknown", tt.name, found, err)
			}
			if err != nil && !strings.Contains(err.Error(), `subscription "team"`) {
				t.Errorf("Delivered(%s) error %q does not name the subscription", tt.name, err)
			}
		})
	}
}

// A temporary failure is not "history can never tell": the scheduler keeps
// the claim and asks again, and asked again, Delivered finds the message.
func TestDeliveredTemporaryFailure(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		dest   string
		method string
		fault  slacktest.Fault
	}{
		{"rate limited", "#standup", "conversations.history", slacktest.Fault{Status: 429, RetryAfter: 3}},
		{"slack down", "#standup", "conversations.history", slacktest.Fault{Status: 503}},
		{"bad gateway", "C0STANDUP1", "conversations.history", slacktest.Fault{Status: 502}},
		{"internal_error", "#standup", "conversations.history", slacktest.Fault{Error: "internal_error"}},
		{"connection dropped", "#standup", "conversations.history", slacktest.Fault{Drop: true}},
		{"timeout", "#standup", "conversations.history", slacktest.Fault{Delay: 5 * time.Second}},
		{"auth.test down", "#standup", "auth.test", slacktest.Fault{Status: 503}},
		{"channel list down", "#standup", "conversations.list", slacktest.Fault{Status: 500}},
		{"email lookup down", "bob@example.com", "users.lookupByEmail", slacktest.Fault{Status: 503}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(c *notify.Config) { c.Retry.MaxAttempts, c.CallTimeout = 2, 100*time.Millisecond })
			r := reminder(sub(tt.dest), meeting(), 10*time.Minute)
			channel := "C0STANDUP1"
			if strings.Contains(tt.dest, "@") {
				channel = "D0BOB00001"
			}
			ours := e.srv.AddMessage(slacktest.Message{Channel: channel, Text: "ours",
				Metadata: &slacktest.Metadata{EventType: notify.EventType, EventPayload: map[string]any{"key": r.Key, "subscription": "team"}}})
			e.srv.Fail(tt.method, "", tt.fault, tt.fault)
			_, found, err := e.slack.Delivered(ctx, r)
			switch {
			case err == nil || found:
				t.Fatalf("Delivered(%s) = found %v, %v, want an error", tt.name, found, err)
			case errors.Is(err, meetingbot.ErrUnknown) || meetingbot.IsPermanent(err):
				t.Errorf("Delivered(%s) error = %v, want a temporary error, not ErrUnknown or permanent: asking again can tell", tt.name, err)
			case !strings.Contains(err.Error(), `subscription "team"`):
				t.Errorf("Delivered(%s) error %q does not name the subscription", tt.name, err)
			}
			rc, found, err := e.slack.Delivered(ctx, r)
			if err != nil || !found || rc.TS != ours.TS || rc.Channel != channel {
				t.Errorf("Delivered(%s) asked again = %+v, %v, %v, want found at %s", tt.name, rc, found, err, ours.TS)
			}
		})
	}
}

func TestDeliveredCanceled(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, found, err := e.slack.Delivered(ctx, reminder(sub("C0STANDUP1"), meeting(), 10*time.Minute))
	if !errors.Is(err, context.Canceled) || errors.Is(err, meetingbot.ErrUnknown) || found {
		t.Errorf("Delivered(canceled) = found %v, %v, want context.Canceled, not ErrUnknown", found, err)
	}
}

func TestReminders(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, func(c *notify.Config) { c.Interval = -1 })
	from := e.clock.Now()
	var want []string
	for i := range 230 { // more than one page
		m := meeting()
		m.ID = fmt.Sprintf("evt%03d", i)
		r := reminder(sub("#standup"), m, 10*time.Minute)
		if _, err := e.slack.Notify(ctx, r); err != nil {
			t.Fatal(err)
		}
		want = append(want, r.Key)
		if i%50 == 0 {
			e.srv.AddMessage(slacktest.Message{Channel: "C0STANDUP1", Text: "not a reminder"})
		}
		e.clock.Advance(time.Second)
	}
	to := e.clock.Now()
	e.clock.Advance(time.Minute)
	if _, err := e.slack.Notify(ctx, reminder(sub("#standup"), meeting(), time.Minute)); err != nil { // after `to`
		t.Fatal(err)
	}
	got, err := e.slack.Reminders(ctx, sub("#standup"), from, to)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("Reminders() returned %d, want %d", len(got), len(want))
	}
	for i, s := range got {
		if s.Key != want[i] {
			t.Fatalf("Reminders()[%d].Key = %s, want %s (oldest first)", i, s.Key, want[i])
		}
	}
	first := got[0]
	wantFirst := meetingbot.Delivery{
		Key: want[0], Subscription: "team", EventID: "evt000", Start: meetingStart, Offset: 10 * time.Minute,
		Channel: "C0STANDUP1", TS: first.TS, Posted: from,
	}
	if first != wantFirst {
		t.Errorf("Reminders()[0] = %+v, want %+v", first, wantFirst)
	}
}
