package slacktest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// The posting budget is workspace-wide: a burst passes at once across
// many channels, the next post is refused with 429 and the Retry-After
// of the bucket's next post, nothing refused is stored, and the bucket
// refills at its rate, at 300 and at 600 a minute.
func TestPostingBudget(t *testing.T) {
	for _, b := range []slacktest.PostingBudget{slacktest.DefaultPostingBudget, {PerMinute: 600, Burst: 60}} {
		t.Run(fmt.Sprint(b.PerMinute), func(t *testing.T) {
			s := slacktest.NewServer()
			t.Cleanup(s.Close)
			for i := range 100 {
				s.AddChannel(slacktest.Channel{ID: fmt.Sprintf("C%09d", i), Name: fmt.Sprint("c", i), Member: true})
			}
			c := clock.NewFake(time.Date(2026, 11, 30, 9, 59, 0, 0, time.UTC))
			s.SetClock(c.Now)
			s.SetPostingBudget(b)
			api := slack.New(slacktest.Token, slack.OptionAPIURL(s.URL()))
			n := 0
			post := func() error {
				n++
				_, _, err := api.PostMessageContext(context.Background(), fmt.Sprintf("C%09d", n%100), slack.MsgOptionText("hi", false))
				return err
			}
			for i := range b.Burst {
				if err := post(); err != nil {
					t.Fatalf("post #%d of a burst of %d = %v", i+1, b.Burst, err)
				}
			}
			var rl *slack.RateLimitedError
			if err := post(); !errors.As(err, &rl) || rl.RetryAfter != time.Second {
				t.Fatalf("post past the burst = %v, want 429 with Retry-After 1s", err)
			}
			// A minute later the bucket is full again, not fuller.
			c.Advance(time.Minute)
			for i := range b.Burst {
				if err := post(); err != nil {
					t.Fatalf("post #%d a minute later = %v", i+1, err)
				}
			}
			if err := post(); !errors.As(err, &rl) {
				t.Fatalf("post past the refilled burst = %v, want 429", err)
			}
			// Over a minute of steady posting, PerMinute pass.
			passed := 0
			for range 60 {
				c.Advance(time.Second)
				for post() == nil {
					passed++
				}
			}
			if passed != b.PerMinute {
				t.Errorf("posts passed over a minute of steady demand = %d, want %d", passed, b.PerMinute)
			}
			if got, want := len(s.Messages()), 2*b.Burst+b.PerMinute; got != want {
				t.Errorf("messages stored = %d, want %d: a refused post takes no effect", got, want)
			}
			if s.PostingRefusals() != 62 {
				t.Errorf("PostingRefusals() = %d, want 62", s.PostingRefusals())
			}
		})
	}
}

// Only what Slack counts with chat.postMessage spends the budget: an edit
// (chat.update, Tier 3) passes while posting is refused.
func TestPostingBudgetSparesUpdate(t *testing.T) {
	s := slacktest.NewServer()
	t.Cleanup(s.Close)
	s.AddChannel(slacktest.Channel{ID: "C000000001", Name: "a", Member: true})
	c := clock.NewFake(time.Date(2026, 11, 30, 9, 59, 0, 0, time.UTC))
	s.SetClock(c.Now)
	s.SetPostingBudget(slacktest.PostingBudget{PerMinute: 20, Burst: 1})
	api := slack.New(slacktest.Token, slack.OptionAPIURL(s.URL()))
	ctx := context.Background()
	ch, ts, err := api.PostMessageContext(ctx, "C000000001", slack.MsgOptionText("hi", false))
	if err != nil {
		t.Fatal(err)
	}
	var rl *slack.RateLimitedError
	if _, _, err := api.PostMessageContext(ctx, "C000000001", slack.MsgOptionText("again", false)); !errors.As(err, &rl) || rl.RetryAfter != 3*time.Second {
		t.Fatalf("second post at once at 20 a minute = %v, want 429 with Retry-After 3s", err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, ch, ts, slack.MsgOptionText("edited", false)); err != nil {
		t.Errorf("chat.update while posting is refused = %v, want it answered", err)
	}
}
