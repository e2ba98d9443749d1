package notify_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// burst posts n reminders to n channels at once, each with its meeting's
// start as urgency, inside a synctest bubble against a Slack that keeps
// slackBudget, and returns what each post became and Slack's messages.
func burst(t *testing.T, n int, slackBudget slacktest.PostingBudget, botBudget int, start func(i int) time.Time) (errs []error, msgs []slacktest.Message, srv *slacktest.Server, s *notify.Slack) {
	srv = slacktest.NewInProcess()
	t.Cleanup(srv.Close)
	srv.SetLatency(150 * time.Millisecond)
	srv.SetPostingBudget(slackBudget)
	users := make([]slacktest.User, n)
	for i := range users {
		users[i] = slacktest.User{ID: fmt.Sprintf("U%08d", i), Name: fmt.Sprint("p", i), Email: fmt.Sprintf("p%d@example.com", i)}
	}
	srv.AddUsers(users...)
	// Channels, not DMs: a DM's first post looks its person up
	// (users.lookupByEmail, conversations.open, Tier 3), which would
	// measure those tiers rather than the posting budget.
	for i := range n {
		srv.AddChannel(slacktest.Channel{ID: fmt.Sprintf("C%08d", i), Name: fmt.Sprint("c", i), Member: true})
	}
	s = notify.New(notify.Config{Token: slacktest.Token, APIURL: srv.URL(), HTTPClient: srv.Client(), PostsPerMinute: botBudget, CallTimeout: 5 * time.Second})
	errs = make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			m := meeting()
			m.ID, m.Start = fmt.Sprintf("e%d", i), start(i)
			sub := meetingbot.Subscription{ID: fmt.Sprint("s", i), CalendarID: users[i].Email, Destination: fmt.Sprintf("C%08d", i), Offsets: []time.Duration{time.Minute}}
			ctx, cancel := context.WithDeadline(meetingbot.WithUrgency(context.Background(), m.Start), m.Start)
			defer cancel()
			_, errs[i] = s.Notify(ctx, reminder(sub, m, time.Minute))
		})
	}
	wg.Wait()
	return errs, srv.Messages(), srv, s
}

// The operator run: 150 people, one reminder each, all due at
// once, meetings three minutes away, a Slack that keeps 60 posts a minute
// and a bot that assumes 300. The bot learns the budget from a handful of
// 429s instead of answering each with another post, posts nothing after a
// meeting's start, and tells the rest at once that they do not fit.
func TestBudgetLearnsFromRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		errs, msgs, srv, s := burst(t, 150, slacktest.PostingBudget{PerMinute: 60, Burst: 6}, 0, func(int) time.Time { return t0.Add(3 * time.Minute) })
		sent, over := 0, 0
		for i, err := range errs {
			switch {
			case err == nil:
				sent++
			case errors.Is(err, notify.ErrOverBudget):
				over++
			default:
				t.Errorf("post %d = %v, want sent or ErrOverBudget", i, err)
			}
		}
		for _, m := range msgs {
			if !m.Posted.Before(t0.Add(3 * time.Minute)) {
				t.Errorf("a post at %v, after its meeting's start", m.Posted.Sub(t0))
			}
		}
		refused := srv.PostingRefusals()
		t.Logf("sent %d, over budget %d, 429s %d, pace learned %.1f a minute", sent, over, refused, s.Budget().PerMinute)
		if refused > 10 {
			t.Errorf("Slack answered 429 %d times, want a handful (at most 10)", refused)
		}
		if sent < 110 { // the halved pace, 37.5 a minute, over the three minutes, and the burst
			t.Errorf("sent %d of 150 in three minutes at 60 a minute, want at least 110", sent)
		}
		if got := s.Budget().Refusals; got != refused {
			t.Errorf("Budget().Refusals = %d, want the %d 429s Slack answered", got, refused)
		}
	})
}

// Posts waiting for the budget go in order of their meeting's start,
// across all destinations, whatever order they asked in; with pacing off,
// today's behaviour, the same crowd meets hundreds of 429s.
func TestBudgetOrdersByDeadline(t *testing.T) {
	for _, tc := range []struct {
		name      string
		botBudget int
	}{{"paced", 0}, {"unpaced", -1}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				// Even-numbered people's meetings start at +2m, odd ones' at +1m.
				start := func(i int) time.Time { return t0.Add(time.Duration(2-i%2) * time.Minute) }
				_, msgs, srv, _ := burst(t, 400, slacktest.DefaultPostingBudget, tc.botBudget, start)
				if tc.botBudget < 0 {
					if srv.PostingRefusals() < 100 {
						t.Errorf("unpaced: %d 429s, want hundreds", srv.PostingRefusals())
					}
					return
				}
				if srv.PostingRefusals() > 0 {
					t.Errorf("paced at Slack's budget: %d 429s, want none", srv.PostingRefusals())
				}
				lastEarly, firstLate := time.Time{}, time.Time{}
				for _, m := range msgs {
					var i int
					if m.Metadata == nil {
						continue
					}
					id, _ := m.Metadata.EventPayload["event_id"].(string)
					fmt.Sscanf(id, "e%d", &i)
					if m.Posted.Before(t0.Add(2 * time.Second)) {
						continue // the first burst goes as the posts arrive
					}
					if i%2 == 1 && m.Posted.After(lastEarly) {
						lastEarly = m.Posted
					}
					if i%2 == 0 && (firstLate.IsZero() || m.Posted.Before(firstLate)) {
						firstLate = m.Posted
					}
				}
				if !firstLate.IsZero() && firstLate.Before(lastEarly) {
					t.Errorf("a post for a meeting at +2m went at %v, before the last for +1m at %v", firstLate.Sub(t0), lastEarly.Sub(t0))
				}
			})
		})
	}
}
