package notify_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// The post is stored, its answer is lost, and the one lookup that could tell
// fails: posting again would make a second reminder. Notify must stop and
// say that Slack may hold the message, and a later lookup finds it.
func TestAmbiguousPostNotPostedAgain(t *testing.T) {
	tests := []struct {
		name  string
		fault slacktest.Fault
	}{
		{"5xx after storing", slacktest.Fault{Status: 503, Applied: true}},
		{"connection dropped after storing", slacktest.Fault{Drop: true}},
		{"answer too late", slacktest.Fault{Delay: 10 * time.Second}},
		{"ok without channel and ts", slacktest.Fault{Body: `{"ok":true}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(c *notify.Config) { c.CallTimeout = 200 * time.Millisecond })
			e.srv.Fail("chat.postMessage", "", tt.fault)
			e.srv.Fail("conversations.history", "", slacktest.Fault{Status: 503})
			r := reminder(sub("#standup"), meeting(), 10*time.Minute)
			rc, err := e.slack.Notify(context.Background(), r)
			switch {
			case !errors.Is(err, meetingbot.ErrUnconfirmed):
				t.Errorf("Notify(%s) = %+v, %v, want an error matching ErrUnconfirmed", tt.name, rc, err)
			case errors.Is(err, meetingbot.ErrUnknown) || meetingbot.IsPermanent(err):
				t.Errorf("Notify(%s) error = %v, want neither ErrUnknown nor permanent", tt.name, err)
			case !strings.Contains(err.Error(), `subscription "team"`):
				t.Errorf("Notify(%s) error %q does not name the subscription", tt.name, err)
			}
			if n := len(e.srv.Messages()); n != 1 {
				t.Errorf("messages = %d, want exactly 1", n)
			}
			if n := len(e.srv.CallsTo("chat.postMessage")); n != 1 {
				t.Errorf("chat.postMessage calls = %d, want 1: no post after a lookup that could not answer", n)
			}
			if n := len(e.srv.CallsTo("conversations.history")); n != 1 {
				t.Errorf("conversations.history calls = %d, want the one lookup", n)
			}
			rc, found, err := e.slack.Delivered(context.Background(), r)
			if msgs := e.srv.Messages(); err != nil || !found || rc.TS != msgs[0].TS {
				t.Errorf("Delivered() after the unconfirmed send = %+v, %v, %v, want the stored message", rc, found, err)
			}
		})
	}
}

// A lookup that answers settles the doubt either way: found, the post is
// done; cleanly not found, it is posted again.
func TestAmbiguousPostSettledByLookup(t *testing.T) {
	tests := []struct {
		name      string
		fault     slacktest.Fault
		wantPosts int
	}{
		{"ok without ts: found", slacktest.Fault{Body: `{"ok":true}`}, 1},
		{"5xx after storing: found", slacktest.Fault{Status: 500, Applied: true}, 1},
		{"connection dropped after storing: found", slacktest.Fault{Drop: true}, 1},
		{"5xx before storing: posted again", slacktest.Fault{Status: 500}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.srv.Fail("chat.postMessage", "", tt.fault)
			rc, err := e.slack.Notify(context.Background(), reminder(sub("#standup"), meeting(), 10*time.Minute))
			msgs := e.srv.Messages()
			if err != nil || len(msgs) != 1 || rc.Channel != "C0STANDUP1" || rc.TS != msgs[0].TS {
				t.Errorf("Notify(%s) = %+v, %v with messages %+v, want the receipt of the one message", tt.name, rc, err, msgs)
			}
			if n := len(e.srv.CallsTo("chat.postMessage")); n != tt.wantPosts {
				t.Errorf("chat.postMessage calls = %d, want %d", n, tt.wantPosts)
			}
		})
	}
}

// Out of attempts after a failure that may hide success: a last lookup
// decides between "unconfirmed" and an ordinary transient error.
func TestAmbiguousLastAttempt(t *testing.T) {
	tests := []struct {
		name            string
		post, history   []slacktest.Fault
		wantUnconfirmed bool
		wantMessages    int
	}{
		{"stored, last lookup fails", []slacktest.Fault{{Status: 503, Applied: true}}, []slacktest.Fault{{Status: 503}}, true, 1},
		{"dropped, last lookup rate limited", []slacktest.Fault{{Drop: true}}, []slacktest.Fault{{Status: 429, RetryAfter: 5}}, true, 1},
		{"not stored, last lookup clean", []slacktest.Fault{{Status: 503}, {Status: 502}}, nil, false, 0},
		{"not stored, then stored, last lookup fails", []slacktest.Fault{{Status: 503}, {Status: 502, Applied: true}}, []slacktest.Fault{{}, {Status: 500}}, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(c *notify.Config) { c.Retry.MaxAttempts = len(tt.post) })
			e.srv.Fail("chat.postMessage", "", tt.post...)
			e.srv.Fail("conversations.history", "", tt.history...)
			_, err := e.slack.Notify(context.Background(), reminder(sub("C0STANDUP1"), meeting(), 10*time.Minute))
			if err == nil || errors.Is(err, meetingbot.ErrUnconfirmed) != tt.wantUnconfirmed || meetingbot.IsPermanent(err) {
				t.Errorf("Notify(%s) error = %v, want unconfirmed %v, not permanent", tt.name, err, tt.wantUnconfirmed)
			}
			if n := len(e.srv.Messages()); n != tt.wantMessages {
				t.Errorf("messages = %d, want %d", n, tt.wantMessages)
			}
			if n := len(e.srv.CallsTo("chat.postMessage")); n != len(tt.post) {
				t.Errorf("chat.postMessage calls = %d, want %d", n, len(tt.post))
			}
		})
	}
}

// A send cut off by its caller's deadline while Slack holds the post cannot
// look: it is unconfirmed.
func TestAmbiguousPostCutOff(t *testing.T) {
	e := newEnv(t)
	e.srv.Fail("chat.postMessage", "", slacktest.Fault{Delay: 10 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := e.slack.Notify(ctx, reminder(sub("C0STANDUP1"), meeting(), 10*time.Minute))
	if !errors.Is(err, meetingbot.ErrUnconfirmed) || len(e.srv.Messages()) != 1 {
		t.Errorf("Notify(cut off after storing) error = %v with %d messages, want ErrUnconfirmed and 1", err, len(e.srv.Messages()))
	}
}

// Failures that prove nothing was posted are retried without a lookup, and
// are never "unconfirmed".
func TestNotPostedFailures(t *testing.T) {
	tests := []struct {
		name  string
		fault slacktest.Fault
	}{
		{"rate limited", slacktest.Fault{Status: 429, RetryAfter: 2}},
		{"internal_error", slacktest.Fault{Error: "internal_error"}},
		{"service_unavailable", slacktest.Fault{Error: "service_unavailable"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(c *notify.Config) { c.Retry.MaxAttempts = 2 })
			e.srv.Fail("chat.postMessage", "", tt.fault, tt.fault)
			_, err := e.slack.Notify(context.Background(), reminder(sub("C0STANDUP1"), meeting(), 10*time.Minute))
			if err == nil || errors.Is(err, meetingbot.ErrUnconfirmed) || meetingbot.IsPermanent(err) {
				t.Errorf("Notify(%s twice) error = %v, want a transient error that is not ErrUnconfirmed", tt.name, err)
			}
			if n := len(e.srv.CallsTo("conversations.history")); n != 0 {
				t.Errorf("conversations.history calls = %d, want none: Slack said it posted nothing", n)
			}
			e.srv.Fail("chat.postMessage", "", tt.fault)
			if _, err := e.slack.Notify(context.Background(), reminder(sub("C0STANDUP1"), meeting(), 10*time.Minute)); err != nil {
				t.Errorf("Notify(%s once) error = %v, want the retry to post", tt.name, err)
			}
			if n := len(e.srv.Messages()); n != 1 {
				t.Errorf("messages = %d, want 1", n)
			}
		})
	}
}

// A connection refused at dial carried nothing: the post is retried at once,
// and when every dial is refused the error is not "unconfirmed".
func TestRefusedConnectionNotUnconfirmed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	var refuse atomic.Int32
	dialer := &net.Dialer{}
	client := &http.Client{Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if refuse.Add(-1) >= 0 {
				addr = closed
			}
			return dialer.DialContext(ctx, network, addr)
		},
	}}
	e := newEnv(t, func(c *notify.Config) { c.HTTPClient, c.Retry.MaxAttempts = client, 2 })
	ctx := context.Background()

	refuse.Store(1)
	if _, err := e.slack.Notify(ctx, reminder(sub("C0STANDUP1"), meeting(), 10*time.Minute)); err != nil {
		t.Fatalf("Notify(first dial refused) error = %v, want posted on the retry", err)
	}
	refuse.Store(100)
	_, err = e.slack.Notify(ctx, reminder(sub("C0STANDUP1"), meeting(), time.Minute))
	if err == nil || errors.Is(err, meetingbot.ErrUnconfirmed) {
		t.Errorf("Notify(every dial refused) error = %v, want a transient error that is not ErrUnconfirmed", err)
	}
	if calls := e.srv.Calls(); len(calls) != 1 || calls[0].Method != "chat.postMessage" {
		t.Errorf("calls = %+v, want only the one post: no lookup after a refused dial", calls)
	}
	if n := len(e.srv.Messages()); n != 1 {
		t.Errorf("messages = %d, want 1", n)
	}
}
