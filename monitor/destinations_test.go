package monitor

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/retry"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// TestDestinationCheckInTheBackground runs the destination checks with
// the real Slack client against the emulator, on short timings: a bad
// channel is logged once at ERROR however often it is checked and stays
// on the health page; a destination Slack could not answer for at first is
// retried in the background until it answers; the good one is quiet.
func TestDestinationCheckInTheBackground(t *testing.T) {
	srv := slacktest.NewServer()
	t.Cleanup(srv.Close)
	srv.AddUser(slacktest.User{ID: "U0ALICE001", Name: "alice", Email: alice})
	srv.AddChannel(slacktest.Channel{ID: engID, Name: "eng", Member: true})
	srv.Fail("users.lookupByEmail", "", slacktest.Fault{Status: 503}, slacktest.Fault{Status: 429, RetryAfter: 1})
	slack := notify.New(notify.Config{Token: slacktest.Token, APIURL: srv.URL(), Retry: retry.Policy{MaxAttempts: 1}})

	subs := []meetingbot.Subscription{
		{ID: alice, CalendarID: alice, Offsets: []time.Duration{time.Minute}},
		{ID: team + "=#eng", CalendarID: team, Destination: "#eng", Offsets: []time.Duration{time.Minute}},
		{ID: team + "=#engineering", CalendarID: team, Destination: "#engineering", Offsets: []time.Duration{time.Minute}},
	}
	mon := New(Options{Subscriptions: subs, Interval: time.Second})
	logs := &syncBuffer{}
	c := NewDestinationCheck(subs, slack.Resolve, mon.Destination, slog.New(slog.NewTextHandler(logs, nil)))
	c.recheck, c.retry = 150*time.Millisecond, 10*time.Millisecond
	c.pace = rate.NewLimiter(rate.Inf, 0)

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { c.Run(ctx) })
	eventually(t, 10*time.Second, "Alice's DM checked after two failures and three rechecks of all", func() bool {
		return len(srv.CallsTo("users.lookupByEmail")) >= 3 && len(srv.CallsTo("conversations.info")) >= 3
	})
	stop()
	wg.Wait()

	out := logs.String()
	if n := strings.Count(out, "level=ERROR"); n != 1 {
		t.Errorf("ERROR lines = %d, want 1 for the one bad destination:\n%s", n, out)
	}
	for _, want := range []string{
		`level=ERROR msg="destination needs attention; its reminders fail until it is fixed" subscription="team@example.com=#engineering" destination=#engineering`,
		"no channel named #engineering is visible to the bot: check the name in CALENDARS",
		`level=WARN msg="destination not checked: Slack did not answer; retrying" subscription=alice@example.com`,
		`level=INFO msg="destination reachable again" subscription=alice@example.com`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "level=WARN"); n != 2 { // 503, then 429: two distinct failures
		t.Errorf("WARN lines = %d, want 2:\n%s", n, out)
	}
	bad := mon.Unreachable()
	if len(bad) != 1 || !strings.HasPrefix(bad[0], "subscription team@example.com=#engineering: ") {
		t.Errorf("Unreachable() = %q, want only #engineering", bad)
	}
}

// TestDestinationChecksArePaced checks five DMs by email with a pace of
// one every 100ms after a burst of two: the check takes at least 300ms
// (the pace is a lower bound, whatever the machine), and every one is
// checked.
func TestDestinationChecksArePaced(t *testing.T) {
	srv := slacktest.NewServer()
	t.Cleanup(srv.Close)
	var subs []meetingbot.Subscription
	for i := range 5 {
		email := fmt.Sprintf("p%d@example.com", i)
		srv.AddUser(slacktest.User{ID: fmt.Sprintf("U0PERSON0%d", i), Name: fmt.Sprint("p", i), Email: email})
		subs = append(subs, meetingbot.Subscription{ID: email, CalendarID: email, Offsets: []time.Duration{time.Minute}})
	}
	slack := notify.New(notify.Config{Token: slacktest.Token, APIURL: srv.URL()})
	mon := New(Options{Subscriptions: subs, Interval: time.Second})
	c := NewDestinationCheck(subs, slack.Resolve, mon.Destination, slog.New(slog.DiscardHandler))
	c.pace = rate.NewLimiter(rate.Every(100*time.Millisecond), 2)

	began := time.Now()
	failed := c.check(context.Background(), subs)
	took := time.Since(began)
	if len(failed) != 0 {
		t.Fatalf("failed checks: %v", failed)
	}
	if n := len(srv.CallsTo("users.lookupByEmail")); n != 5 {
		t.Errorf("users.lookupByEmail calls = %d, want 5", n)
	}
	if took < 300*time.Millisecond {
		t.Errorf("5 checks at one per 100ms after a burst of 2 took %v, want at least 300ms", took)
	}
	if bad := mon.Unreachable(); len(bad) != 0 {
		t.Errorf("Unreachable() = %q, want none", bad)
	}
}

// Names the tests share with their subscriptions.
const (
	alice = "alice@example.com"
	team  = "team@example.com"
	engID = "C0ENG00001"
)

// syncBuffer is a log both the check's goroutine and the test use.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// eventually waits up to within for cond, failing the test with what it
// waited for.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %v waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
