package notify_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

func TestDestinations(t *testing.T) {
	tests := []struct {
		dest        string
		wantChannel string
		wantCalls   []string // lookups before the post
	}{
		{"C0STANDUP1", "C0STANDUP1", nil},
		{"G0PRIVATE1", "G0PRIVATE1", nil},
		{"#standup", "C0STANDUP1", []string{"conversations.list"}},
		{"#private", "G0PRIVATE1", []string{"conversations.list"}},
		{"U0ALICE001", "D0ALICE001", []string{"conversations.open"}},
		{"W0BOB00001", "D0BOB00001", []string{"conversations.open"}},
		{"bob@example.com", "D0BOB00001", []string{"users.lookupByEmail", "conversations.open"}},
		{"", "D0ALICE001", []string{"users.lookupByEmail", "conversations.open"}}, // the calendar owner
	}
	for _, tt := range tests {
		t.Run(tt.dest, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			r := reminder(sub(tt.dest), meeting(), 10*time.Minute)
			for i := range 2 { // the second send must reuse the resolution
				rc, err := e.slack.Notify(ctx, r)
				if err != nil || rc.Channel != tt.wantChannel || rc.TS == "" {
					t.Fatalf("Notify(%q) #%d = %+v, %v, want channel %s", tt.dest, i, rc, err, tt.wantChannel)
				}
			}
			var got []string
			for _, c := range e.srv.Calls() {
				if c.Method != "chat.postMessage" {
					got = append(got, c.Method)
				}
			}
			if !slices.Equal(got, tt.wantCalls) {
				t.Errorf("Notify(%q) lookups = %v, want %v (once, then cached)", tt.dest, got, tt.wantCalls)
			}
			if msgs := e.srv.Messages(); len(msgs) != 2 || msgs[0].Channel != tt.wantChannel {
				t.Errorf("Notify(%q) messages = %+v, want 2 in %s", tt.dest, msgs, tt.wantChannel)
			}
		})
	}
}

// A channel on the last page of a large workspace is found: the listing
// follows every page, as large as Slack takes (999), at Tier 2's pace.
func TestChannelNameFollowsPages(t *testing.T) {
	e := newEnv(t)
	for i := range 2100 {
		e.srv.AddChannel(slacktest.Channel{ID: fmt.Sprintf("C1%08d", i), Name: fmt.Sprint("filler-", i)})
	}
	e.srv.AddChannel(slacktest.Channel{ID: "C0LAST0001", Name: "last", Member: true})
	rc, err := e.slack.Notify(context.Background(), reminder(sub("#last"), meeting(), 10*time.Minute))
	if err != nil || rc.Channel != "C0LAST0001" {
		t.Fatalf("Notify(#last) = %+v, %v, want C0LAST0001", rc, err)
	}
	calls := e.srv.CallsTo("conversations.list")
	if len(calls) != 3 {
		t.Fatalf("conversations.list calls = %d, want 3 pages of 999", len(calls))
	}
	for i, c := range calls {
		if c.Form.Get("limit") != "999" || c.Form.Get("exclude_archived") != "true" || c.Form.Get("types") != "public_channel,private_channel" {
			t.Errorf("conversations.list #%d = %v, want limit 999, exclude_archived, public and private channels", i+1, c.Form)
		}
		if i > 0 && c.At.Sub(calls[i-1].At) < 3*time.Second {
			t.Errorf("conversations.list #%d came %v after the one before, want at least 3s (Tier 2)", i+1, c.At.Sub(calls[i-1].At))
		}
	}
}

func TestRateLimitHonoured(t *testing.T) {
	e := newEnv(t)
	e.srv.Fail("chat.postMessage", "C0STANDUP1", slacktest.Fault{Status: 429, RetryAfter: 7})
	rc, err := e.slack.Notify(context.Background(), reminder(sub("C0STANDUP1"), meeting(), 10*time.Minute))
	if err != nil || rc.TS == "" {
		t.Fatalf("Notify() = %+v, %v, want delivered", rc, err)
	}
	if n := len(e.srv.Messages()); n != 1 {
		t.Errorf("messages = %d, want exactly 1", n)
	}
	if s := e.clock.Sleeps(); !slices.Contains(s, 7*time.Second) {
		t.Errorf("sleeps = %v, want a 7s wait from Retry-After", s)
	}
	calls := e.srv.CallsTo("chat.postMessage")
	if gap := calls[1].At.Sub(calls[0].At); gap < 7*time.Second {
		t.Errorf("retry came %v after the 429, want at least 7s", gap)
	}
	want := []string{"chat.postMessage rate_limited", "chat.postMessage ok"}
	if got := e.obs.all(); !slices.Equal(got, want) {
		t.Errorf("Observe calls = %v, want %v", got, want)
	}
}

func TestServerErrorsRetriedWithBackoff(t *testing.T) {
	e := newEnv(t)
	e.srv.Fail("chat.postMessage", "", slacktest.Fault{Status: 500}, slacktest.Fault{Status: 503}, slacktest.Fault{Error: "internal_error"})
	if _, err := e.slack.Notify(context.Background(), reminder(sub("C0STANDUP1"), meeting(), 10*time.Minute)); err != nil {
		t.Fatalf("Notify() error: %v", err)
	}
	if n := len(e.srv.Messages()); n != 1 {
		t.Errorf("messages = %d, want 1", n)
	}
	// Three retries with jittered doubling backoff (0.5-1s, 1-2s, 2-4s),
	// each at least the 1s pace of the channel: 4s to 7s of waiting in all;
	// the pace alone would be 3s.
	var total time.Duration
	for _, d := range e.clock.Sleeps() {
		total += d
	}
	if total < 4*time.Second || total > 7*time.Second {
		t.Errorf("sleeps = %v (%v in all), want doubling backoff of 4s to 7s in all", e.clock.Sleeps(), total)
	}
}

func TestGivesUpAfterMaxAttempts(t *testing.T) {
	e := newEnv(t, func(c *notify.Config) { c.Retry.MaxAttempts = 3 })
	e.srv.Fail("chat.postMessage", "", slacktest.Fault{Status: 502}, slacktest.Fault{Status: 502}, slacktest.Fault{Status: 502})
	_, err := e.slack.Notify(context.Background(), reminder(sub("C0STANDUP1"), meeting(), 10*time.Minute))
	if err == nil || meetingbot.IsPermanent(err) || !strings.Contains(err.Error(), `subscription "team"`) {
		t.Fatalf("Notify() error = %v, want a transient error naming the subscription", err)
	}
	if n := len(e.srv.CallsTo("chat.postMessage")); n != 3 {
		t.Errorf("attempts = %d, want 3", n)
	}
}

// A post whose answer is lost (Slack stored it, the client timed out) must
// not be posted again: the retry first finds it in history.
func TestLostAnswerNotPostedTwice(t *testing.T) {
	e := newEnv(t, func(c *notify.Config) { c.CallTimeout = 200 * time.Millisecond })
	e.srv.Fail("chat.postMessage", "", slacktest.Fault{Delay: 10 * time.Second})
	rc, err := e.slack.Notify(context.Background(), reminder(sub("#standup"), meeting(), 10*time.Minute))
	if err != nil {
		t.Fatalf("Notify() error: %v", err)
	}
	msgs := e.srv.Messages()
	if len(msgs) != 1 || rc.TS != msgs[0].TS || rc.Channel != "C0STANDUP1" {
		t.Errorf("Notify() = %+v with messages %+v, want exactly the one message", rc, msgs)
	}
	if n := len(e.srv.CallsTo("chat.postMessage")); n != 1 {
		t.Errorf("chat.postMessage calls = %d, want 1", n)
	}
}

func TestLostAnswerOnLastAttempt(t *testing.T) {
	e := newEnv(t, func(c *notify.Config) { c.CallTimeout, c.Retry.MaxAttempts = 200*time.Millisecond, 1 })
	e.srv.Fail("chat.postMessage", "", slacktest.Fault{Delay: 10 * time.Second})
	rc, err := e.slack.Notify(context.Background(), reminder(sub("C0STANDUP1"), meeting(), 10*time.Minute))
	if msgs := e.srv.Messages(); err != nil || len(msgs) != 1 || rc.TS != msgs[0].TS {
		t.Errorf("Notify() = %+v, %v with messages %+v, want the accepted message's receipt", rc, err, msgs)
	}
}

func TestPacingPerChannel(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for i := range 5 {
		m := meeting()
		m.ID = m.ID + string(rune('a'+i))
		if _, err := e.slack.Notify(ctx, reminder(sub("C0STANDUP1"), m, 10*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if _, err := e.slack.Notify(ctx, reminder(sub("#private"), m, 10*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	last := map[string]time.Time{}
	for _, m := range e.srv.Messages() {
		if prev, ok := last[m.Channel]; ok && m.Posted.Sub(prev) < time.Second {
			t.Errorf("posts to %s %v apart, want at least 1s", m.Channel, m.Posted.Sub(prev))
		}
		last[m.Channel] = m.Posted
	}
	// Two channels interleaved: each waits for its own slot only, so five
	// posts to each take about four seconds, not nine.
	if took := e.clock.Now().Sub(meetingStart.Add(-10 * time.Minute)); took > 5*time.Second {
		t.Errorf("burst took %v of clock time, want about 4s", took)
	}
}

// TestPacingConcurrent: concurrent senders to one channel queue a pace
// apart instead of bursting. The clock is the fake one, whose Sleep lets
// the time pass at once and records it; only the sender at the head of the
// channel's queue sleeps, so what each was told to wait is the same on any
// machine, however loaded.
func TestPacingConcurrent(t *testing.T) {
	e := newEnv(t, func(c *notify.Config) { c.Interval = 40 * time.Millisecond })
	errs := make(chan error, 4)
	for i := range 4 {
		go func() {
			m := meeting()
			m.ID += string(rune('a' + i))
			_, err := e.slack.Notify(context.Background(), reminder(sub("C0STANDUP1"), m, 10*time.Minute))
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := len(e.srv.Messages()); n != 4 {
		t.Errorf("4 concurrent posts to one channel made %d messages, want 4", n)
	}
	// The first goes at once; each of the others waits one pace after the
	// one before it.
	want := []time.Duration{40 * time.Millisecond, 40 * time.Millisecond, 40 * time.Millisecond}
	if got := e.clock.Sleeps(); !slices.Equal(got, want) {
		t.Errorf("4 concurrent posts to one channel waited %v, want %v", got, want)
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		token   string
		wantErr string
	}{
		{slacktest.Token, ""},
		{"xoxb-not-valid", "SLACK_BOT_TOKEN was rejected by Slack (invalid_auth): copy the Bot User OAuth Token (xoxb-…) from your app's OAuth & Permissions page"},
		{"", "SLACK_BOT_TOKEN was rejected by Slack (not_authed)"},
	}
	for _, tt := range tests {
		var logs bytes.Buffer
		e := newEnv(t, func(c *notify.Config) {
			c.Token = tt.token
			c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		})
		if id := e.slack.BotUserID(); id != "" {
			t.Errorf("BotUserID() before Check = %q, want \"\"", id)
		}
		err := e.slack.Check(context.Background())
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("Check(%q) = %v, want nil", tt.token, err)
		case tt.wantErr == "" && e.slack.BotUserID() != slacktest.BotUserID:
			t.Errorf("BotUserID() after Check = %q, want %q", e.slack.BotUserID(), slacktest.BotUserID)
		case tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) || !meetingbot.IsPermanent(err)):
			t.Errorf("Check(%q) = %v, want permanent error starting %q", tt.token, err, tt.wantErr)
		}
		if tt.token != "" && (strings.Contains(logs.String(), tt.token) || (err != nil && strings.Contains(err.Error(), tt.token))) {
			t.Errorf("Check(%q): the token leaked into logs or the error", tt.token)
		}
	}
}

func TestCheckRetriesTransient(t *testing.T) {
	e := newEnv(t)
	e.srv.Fail("auth.test", "", slacktest.Fault{Status: 503})
	if err := e.slack.Check(context.Background()); err != nil {
		t.Errorf("Check() after one 503 = %v, want nil", err)
	}
	if got, want := e.obs.all(), []string{"auth.test server_error", "auth.test ok"}; !slices.Equal(got, want) {
		t.Errorf("Observe calls = %v, want %v", got, want)
	}
}

func TestContextCancelStopsRetries(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	e := newEnv(t, func(c *notify.Config) {
		c.Sleep = func(ctx context.Context, d time.Duration) error { cancel(); return context.Canceled }
	})
	e.srv.Fail("chat.postMessage", "", slacktest.Fault{Status: 429, RetryAfter: 30})
	_, err := e.slack.Notify(ctx, reminder(sub("C0STANDUP1"), meeting(), 10*time.Minute))
	if !errors.Is(err, context.Canceled) || meetingbot.IsPermanent(err) {
		t.Errorf("Notify(canceled during Retry-After) = %v, want context.Canceled, not permanent", err)
	}
	if n := len(e.srv.CallsTo("chat.postMessage")); n != 1 {
		t.Errorf("chat.postMessage calls = %d, want 1", n)
	}
}

// Reminders waiting together for a channel's next slot go out in order of
// their meetings' start, not of their arrival: the one whose meeting
// starts soonest first.
func TestPacingServesTheSoonestMeetingFirst(t *testing.T) {
	e := newEnv(t, func(c *notify.Config) {
		c.Now, c.Sleep, c.Interval = time.Now, nil, 200*time.Millisecond
	})
	e.srv.SetClock(time.Now)
	send := func(id string, starts time.Time, done chan<- error) {
		m := meeting()
		m.ID = id
		ctx := meetingbot.WithUrgency(context.Background(), starts)
		_, err := e.slack.Notify(ctx, reminder(sub("C0STANDUP1"), m, 10*time.Minute))
		done <- err
	}
	done := make(chan error, 4)
	now := time.Now()
	go send("first", now.Add(time.Hour), done) // takes the free slot
	time.Sleep(50 * time.Millisecond)
	go send("later", now.Add(3*time.Hour), done)
	time.Sleep(20 * time.Millisecond)
	go send("latest", now.Add(4*time.Hour), done)
	time.Sleep(20 * time.Millisecond)
	go send("soon", now.Add(2*time.Hour), done)
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	var order []string
	for _, m := range e.srv.Messages() {
		order = append(order, m.Metadata.EventPayload["event_id"].(string))
	}
	if want := []string{"first", "soon", "later", "latest"}; !slices.Equal(order, want) {
		t.Errorf("posts to one channel in order %v, want %v", order, want)
	}
}
