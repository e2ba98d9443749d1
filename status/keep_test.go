package status_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/status"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// slackUserToken is srv's user token for userID, the test failing without one.
func slackUserToken(t *testing.T, srv *slacktest.Server, userID string) string {
	t.Helper()
	tok, err := srv.UserToken(t.Context(), userID)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// mirrored is a calendar as the mirror answers it.
type fakeMirror struct {
	mu sync.Mutex
	ms []meetingbot.Meeting
}

func (c *fakeMirror) set(ms ...meetingbot.Meeting) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ms = ms
}

func (c *fakeMirror) meetings(_ context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []meetingbot.Meeting
	for _, m := range c.ms {
		if m.Start.After(from) && !m.Start.After(to) {
			out = append(out, m)
		}
	}
	return meetingbot.ForSubscription(sub, out), nil
}

// The statuses shown follow their meetings on the injected clock: a
// meeting extended while its status shows moves the expiration (one read
// of Slack, not one every keepInterval after), and a meeting declined
// clears it.
func TestKeepFollowsMeetings(t *testing.T) {
	ctx := t.Context()
	srv := slacktest.NewServer()
	defer srv.Close()
	tok := slackUserToken(t, srv, "U1")
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "bot.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	if err := st.PutConnection(ctx, meetingbot.Connection{Provider: meetingbot.ProviderSlack, UserID: "U1", Account: "U1",
		Token: []byte("sealed"), State: meetingbot.ConnectionActive, CreatedAt: start, UpdatedAt: start}); err != nil {
		t.Fatal(err)
	}
	cal := &fakeMirror{}
	set := notify.NewStatus(notify.StatusConfig{
		APIURL: srv.URL(), Token: func(context.Context, string) (string, error) { return tok, nil },
		Meetings: cal.meetings, Ledger: st, Sleep: func(context.Context, time.Duration) error { return nil },
	})
	var mu sync.Mutex
	now := start
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	srv.SetClock(clock)
	s := status.New(status.Config{Connections: st, Settings: st, Email: func(context.Context, string) (string, error) { return "u1@example.com", nil },
		Now: clock, Logger: slog.New(slog.DiscardHandler)})
	subs, err := s.Subscriptions(ctx)
	if err != nil || len(subs) != 1 {
		t.Fatalf("subscriptions = %v, %v; want U1's", subs, err)
	}
	m := meetingbot.Meeting{ID: "review", Title: "Review", Start: start, End: start.Add(30 * time.Minute)}
	cal.set(m)
	r := meetingbot.Reminder{Key: meetingbot.Key(m.ID, 0, m.Start), Subscription: subs[0], Meeting: m, TriggerAt: m.Start}
	e := meetingbot.Entry{Subscription: r.Subscription.ID, Key: r.Key, EventID: m.ID, Start: m.Start, TriggerAt: m.Start}
	if _, _, err := st.Claim(ctx, e, start, start.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	receipt, err := set.Notify(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	e.Outcome, e.Channel, e.MessageTS = meetingbot.Sent, receipt.Channel, receipt.TS
	if err := st.Record(ctx, e, start); err != nil {
		t.Fatal(err)
	}

	gets := func() int { return len(srv.CallsTo("users.profile.get")) }
	steps := []struct {
		name  string
		after time.Duration
		cal   []meetingbot.Meeting
		want  time.Time // the status's expiration, zero for none
		reads int       // users.profile.get calls by then, the Notify's included
	}{
		{"unchanged", 5 * time.Minute, []meetingbot.Meeting{m}, m.End, 1},
		{"extended to 10:00", 10 * time.Minute, []meetingbot.Meeting{{ID: "review", Title: "Review", Start: start, End: start.Add(time.Hour)}}, start.Add(time.Hour), 2},
		{"ticks later", 15 * time.Minute, []meetingbot.Meeting{{ID: "review", Title: "Review", Start: start, End: start.Add(time.Hour)}}, start.Add(time.Hour), 2},
		{"declined", 20 * time.Minute, nil, time.Time{}, 3},
		{"ticks after", 25 * time.Minute, nil, time.Time{}, 3},
	}
	for _, step := range steps {
		mu.Lock()
		now = start.Add(step.after)
		mu.Unlock()
		cal.set(step.cal...)
		s.KeepOnce(ctx, set)
		if got := srv.StatusOf("U1"); !got.Expiration.Equal(step.want) || step.want.IsZero() != (got == slacktest.Status{}) {
			t.Errorf("%s: status = %+v, want until %v", step.name, got, step.want)
		}
		if n := gets(); n != step.reads {
			t.Errorf("%s: users.profile.get calls = %d, want %d", step.name, n, step.reads)
		}
	}
}
