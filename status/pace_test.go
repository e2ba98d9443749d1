package status_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/scheduler"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// sim is a fake clock under which the scheduler's timers and the
// senders' waits run as they do in production, each in a goroutine of
// its own, while time moves only when the test moves it: a move fires
// the timers due, and quiet waits until every goroutine the timers
// started has ended or waits for a later instant.
type sim struct {
	fake *clock.Fake
	mu   sync.Mutex
	cond *sync.Cond
	busy int
}

func newSim(t time.Time) *sim {
	s := &sim{fake: clock.NewFake(t)}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (s *sim) add(n int) {
	s.mu.Lock()
	s.busy += n
	s.mu.Unlock()
	s.cond.Broadcast()
}

func (s *sim) Now() time.Time          { return s.fake.Now() }
func (s *sim) Elapsed() time.Duration  { return s.fake.Elapsed() }
func (s *sim) Advance(d time.Duration) { s.fake.Advance(d) }

// AfterFunc runs fn in a goroutine of its own once d has passed, as
// time.AfterFunc does.
func (s *sim) AfterFunc(d time.Duration, fn func()) clock.Timer {
	return s.fake.AfterFunc(d, func() {
		s.add(1)
		go func() {
			defer s.add(-1)
			fn()
		}()
	})
}

// Sleep waits until d has passed on the fake clock, or ctx ends. It is
// called from a goroutine sim counts as busy, which is idle meanwhile.
func (s *sim) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	woke := make(chan struct{})
	t := s.fake.AfterFunc(d, func() {
		s.add(1)
		close(woke)
	})
	s.add(-1)
	select {
	case <-woke:
		return nil
	case <-ctx.Done():
		if t.Stop() {
			s.add(1)
		} else {
			<-woke
		}
		return ctx.Err()
	}
}

// quiet waits until no goroutine is busy, and reports whether that came
// within (real time): a goroutine blocked on anything but the fake clock
// (a send slot another holds while it waits) never lets it.
func (s *sim) quiet(within time.Duration) bool {
	done := make(chan struct{})
	go func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for s.busy > 0 {
			s.cond.Wait()
		}
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(within):
		s.add(0) // wake the waiter; it ends when the goroutines do
		return false
	}
}

// meetingsAt is one meeting per calendar, as the mirror answers it.
type meetingsAt map[string]meetingbot.Meeting

func (m meetingsAt) Meetings(_ context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
	mt, ok := m[sub.CalendarID]
	if !ok || !mt.Start.After(from) || mt.Start.After(to) {
		return nil, nil
	}
	return []meetingbot.Meeting{mt}, nil
}

func (m meetingsAt) Meeting(_ context.Context, sub meetingbot.Subscription, id string) (meetingbot.Meeting, error) {
	mt, ok := m[sub.CalendarID]
	if !ok || mt.ID != id {
		return meetingbot.Meeting{}, meetingbot.ErrGone
	}
	return mt, nil
}

// A company's 09:00: 1,000 people whose statuses the bot sets and 50
// whose "starting now" reminders it sends, every meeting at 09:00 (each
// reminder's first DM looks its person up with users.lookupByEmail and
// conversations.open, Slack's Tier 3: 50 people a minute). The
// statuses are paced at Slack's Tier 3 (50 a minute), none set more than a
// minute after the start, those whose turn comes later skipped and
// recorded (rate_limited); the reminders of the same instant go out at
// 09:00, their send slots never held by a status waiting for its turn.
func TestStatusesPacedAtNine(t *testing.T) {
	const people, reminded = 1000, 50
	ctx := t.Context()
	nine := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	sim := newSim(nine.Add(-30 * time.Second))
	srv := slacktest.NewServer()
	defer srv.Close()
	srv.SetClock(sim.Now)
	srv.SetStatusRateLimit(notify.DefaultStatusPerMinute, time.Minute)
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "bot.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	cal := meetingsAt{}
	tokens := map[string]string{}
	var subs []meetingbot.Subscription
	for i := range people {
		user, email := fmt.Sprintf("U%07d", i), fmt.Sprintf("p%d@example.com", i)
		tokens[user] = srv.GrantUserToken(user)
		cal[email] = meetingbot.Meeting{ID: fmt.Sprintf("standup%d", i), Title: "Standup", Start: nine, End: nine.Add(15 * time.Minute)}
		subs = append(subs, meetingbot.Subscription{ID: "status:" + user, Kind: meetingbot.KindStatus, CalendarID: email, Destination: meetingbot.StatusDestination(user), Offsets: []time.Duration{0}})
	}
	for i := range reminded {
		user, email := fmt.Sprintf("W%07d", i), fmt.Sprintf("r%d@example.com", i)
		srv.AddUser(slacktest.User{ID: user, Name: fmt.Sprintf("r%d", i), Email: email})
		cal[email] = meetingbot.Meeting{ID: fmt.Sprintf("review%d", i), Title: fmt.Sprintf("Review %d", i), Start: nine, End: nine.Add(30 * time.Minute)}
		subs = append(subs, meetingbot.Subscription{ID: email, CalendarID: email, Offsets: []time.Duration{0}})
	}
	set := notify.NewStatus(notify.StatusConfig{
		APIURL: srv.URL(), Token: func(_ context.Context, user string) (string, error) { return tokens[user], nil },
		Meetings: cal.Meetings, Ledger: st, Now: sim.Now, Sleep: sim.Sleep,
	})
	// The posting budget is off here: its queue's waiters wait on each
	// other, not on the clock, which sim counts as busy; the budget is
	// measured in notify's budget tests and the burst benchmark.
	slack := notify.New(notify.Config{Token: slacktest.Token, APIURL: srv.URL(), Now: sim.Now, Sleep: sim.Sleep, PostsPerMinute: -1})
	sched, err := scheduler.New(subs, cal, scheduler.ByKind{meetingbot.KindReminder: slack, meetingbot.KindStatus: set}, st, scheduler.Options{
		// Fewer send slots than statuses or reminders, as a company larger
		// than the default 256 has.
		Clock: sim, Interval: time.Minute, MaxSends: 32, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sched.Stop()

	sim.add(1)
	if err := sched.Tick(ctx); err != nil { // plans the 09:00 timers
		t.Fatal(err)
	}
	sim.add(-1)
	for end := nine.Add(90 * time.Second); sim.Now().Before(end); {
		sim.Advance(100 * time.Millisecond)
		if !sim.quiet(time.Minute) {
			t.Fatalf("at %v, sends still busy after a minute: blocked on something but the clock (a send slot held by a status waiting for its turn?)", sim.Now().Sub(nine))
		}
	}

	// The reminders, at 09:00.
	var latest time.Duration
	for i := range reminded {
		title := fmt.Sprintf("Review %d", i)
		var n int
		for _, m := range srv.Messages() {
			if strings.Contains(m.Text, title+" ") {
				n++
				latest = max(latest, m.Posted.Sub(nine))
			}
		}
		if n != 1 {
			t.Errorf("reminders of %s = %d, want 1", title, n)
		}
	}
	if latest > time.Second {
		t.Errorf("the latest 09:00 reminder went out %v after 09:00, want within a second: statuses held its send", latest)
	}

	// The statuses: Tier 3's pace (at most 50 in any minute, a few at
	// once), none more than a minute late.
	sets := srv.StatusSets()
	for i, s := range sets {
		if late := s.At.Sub(nine); late < 0 || late > meetingbot.StartGrace {
			t.Errorf("status of %s set %v after its start, want at most %v", s.User, late, meetingbot.StartGrace)
		}
		// The pace's arithmetic is in floating point: a nanosecond short.
		if j := i + notify.DefaultStatusPerMinute; j < len(sets) && sets[j].At.Sub(s.At) < time.Minute-time.Microsecond {
			t.Errorf("%d statuses set within %v (from %v), want at most %d in any minute: Tier 3's pace", notify.DefaultStatusPerMinute+1, sets[j].At.Sub(s.At), s.At.Sub(nine), notify.DefaultStatusPerMinute)
		}
	}
	if n := len(sets); n > 0 && sets[min(n, notify.DefaultStatusPerMinute/10)-1].At.After(nine.Add(time.Second)) {
		t.Errorf("the first %d statuses set by %v, want within a second of their start", notify.DefaultStatusPerMinute/10, sets[min(n, notify.DefaultStatusPerMinute/10)-1].At.Sub(nine))
	}
	if n := srv.StatusRateLimited(); n != 0 {
		t.Errorf("users.profile.set answered 429 %d times, want none", n)
	}
	entries, err := st.Range(ctx, "", nine.Add(-time.Minute), nine.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]int{}
	for _, e := range entries {
		if strings.HasPrefix(e.Subscription, "status:") {
			outcomes[string(e.Outcome)+"/"+string(e.Code)]++
		}
	}
	t.Logf("%d statuses set, the last %v after 09:00; ledger %v; latest reminder %v after 09:00", len(sets), sets[len(sets)-1].At.Sub(nine), outcomes, latest)
	wantSet := notify.DefaultStatusPerMinute // 5 at 09:00, then one each 60/45 s up to 09:01:00
	if len(sets) != wantSet || outcomes["sent/"] != wantSet || outcomes["skipped/rate_limited"] != people-wantSet {
		t.Errorf("statuses set %d, ledger %v; want %d sent and %d skipped rate_limited", len(sets), outcomes, wantSet, people-wantSet)
	}
}
