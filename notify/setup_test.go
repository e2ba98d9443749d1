package notify_test

import (
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/internal/retry"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// observed records Config.Observe calls.
type observed struct {
	mu    sync.Mutex
	calls []string
}

func (o *observed) observe(call string, class retry.Class) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, call+" "+string(class))
}

func (o *observed) all() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.calls...)
}

var meetingStart = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

type env struct {
	srv   *slacktest.Server
	slack *notify.Slack
	clock *clock.Fake
	obs   *observed
}

// newEnv starts a seeded emulator and a notifier pointed at it, both on a
// fake clock set to 08:50 on the meeting day.
func newEnv(t *testing.T, tweak ...func(*notify.Config)) *env {
	t.Helper()
	srv := slacktest.NewServer()
	t.Cleanup(srv.Close)
	srv.AddUser(slacktest.User{ID: "U0ALICE001", Name: "alice", Email: "alice@example.com"})
	srv.AddUser(slacktest.User{ID: "W0BOB00001", Name: "bob", Email: "bob@example.com"})
	srv.AddChannel(slacktest.Channel{ID: "C0STANDUP1", Name: "standup", Member: true})
	srv.AddChannel(slacktest.Channel{ID: "C0RANDOM01", Name: "random"})
	srv.AddChannel(slacktest.Channel{ID: "C0OLD00001", Name: "old", Archived: true, Member: true})
	srv.AddChannel(slacktest.Channel{ID: "G0PRIVATE1", Name: "private", Private: true, Member: true})
	clock := clock.NewFake(meetingStart.Add(-10 * time.Minute))
	srv.SetClock(clock.Now)
	obs := &observed{}
	cfg := notify.Config{
		Token: slacktest.Token, APIURL: srv.URL(), Observe: obs.observe,
		Now: clock.Now, Sleep: clock.Sleep, CallTimeout: 2 * time.Second, Snooze: true,
	}
	for _, f := range tweak {
		f(&cfg)
	}
	return &env{srv: srv, slack: notify.New(cfg), clock: clock, obs: obs}
}

func sub(dest string) meetingbot.Subscription {
	return meetingbot.Subscription{ID: "team", CalendarID: "alice@example.com", Destination: dest, Offsets: []time.Duration{10 * time.Minute}}
}

func meeting() meetingbot.Meeting {
	return meetingbot.Meeting{
		ID: "evt123_20260302T090000Z", Title: "Weekly sync",
		Start: meetingStart, End: meetingStart.Add(30 * time.Minute),
		HTMLLink:  "https://www.google.com/calendar/event?eid=ZXZ0MTIz",
		JoinURL:   "https://meet.google.com/abc-defg-hij",
		Organizer: "Alice Example",
	}
}

func reminder(s meetingbot.Subscription, m meetingbot.Meeting, offset time.Duration) meetingbot.Reminder {
	return meetingbot.Reminder{
		Key: meetingbot.Key(m.ID, offset, m.Start), Subscription: s, Meeting: m,
		Offset: offset, TriggerAt: m.Start.Add(-offset),
	}
}
