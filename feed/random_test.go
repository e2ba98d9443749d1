package feed_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/feed"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

var (
	randomSeed  = flag.Uint64("feed.seed", 0, "the first case's seed (0: from the clock)")
	randomCases = flag.Int("feed.cases", 60, "how many random cases")
)

// errKilled is what a ledger write returns in the process the test
// kills there: the claim stays in flight, as after a SIGKILL.
var errKilled = errors.New("killed")

// dyingLedger is a process's ledger that dies at its next Record when
// told to: the notice is in Slack, its record is not.
type dyingLedger struct {
	feed.Ledger
	die  *bool
	dead bool
}

func (l *dyingLedger) Record(ctx context.Context, e meetingbot.Entry, now time.Time) error {
	if *l.die || l.dead {
		*l.die, l.dead = false, true
		return errKilled
	}
	return l.Ledger.Record(ctx, e, now)
}

func (l *dyingLedger) Claim(ctx context.Context, e meetingbot.Entry, now, leaseUntil time.Time) (meetingbot.ClaimStatus, meetingbot.Entry, error) {
	if l.dead {
		return meetingbot.Busy, meetingbot.Entry{}, errKilled
	}
	return l.Ledger.Claim(ctx, e, now, leaseUntil)
}

// TestRandomChangesPassesAndCrashes: random edits of a team calendar
// (adds, moves, renames, new places, cancellations, bursts), passes at
// random instants, processes killed between a post and its record and
// answers from Slack lost. After each case, with passes until everything
// settled: no notice was posted twice, none told the first reading, and
// what the channel last heard of each upcoming event is how it ended.
func TestRandomChangesPassesAndCrashes(t *testing.T) {
	seed := *randomSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	cases := *randomCases
	if testing.Short() {
		cases = 10
	}
	for i := range cases {
		s := seed + uint64(i)
		if !t.Run(fmt.Sprintf("seed=%d", s), func(t *testing.T) { randomCase(t, s) }) {
			t.Logf("rerun with -feed.seed=%d -feed.cases=1", s)
			return
		}
	}
}

func randomCase(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, seed))
	w := &world{cal: &calendar{events: map[string]meetingbot.Meeting{}}, posts: &channelPosts{}, clk: clock.NewFake(t0),
		path: filepath.Join(t.TempDir(), "bot.db"), since: t0.Add(-time.Hour)}
	titles := []string{"Standup", "Review", "Planning", "Retro", "1:1"}
	places := []string{"", "Room 1", "Room 2"}
	n := 3 + r.IntN(10)
	initial := map[string]bool{}
	for i := range n {
		id := fmt.Sprintf("e%d", i)
		if r.IntN(2) == 0 {
			m := event(id, titles[r.IntN(len(titles))], t0.Add(time.Duration(1+r.IntN(100))*time.Hour), t0.Add(-time.Hour))
			m.Location = places[r.IntN(len(places))]
			w.cal.put(m)
			initial[id] = true
		}
	}
	die := false
	var store *sqlite.Store
	var e *feed.Engine
	var led *dyingLedger
	open := func() {
		if store != nil {
			store.Close() // the killed process's claims are orphaned
		}
		var err error
		store, err = sqlite.Open(t.Context(), w.path)
		if err != nil {
			t.Fatal(err)
		}
		subs := func(context.Context) ([]feed.Followed, error) {
			return []feed.Followed{{Subscription: channel, Since: w.since}}, nil
		}
		led = &dyingLedger{Ledger: store, die: &die}
		e, err = feed.New(subs, w.cal, store, w.posts, led, feed.Options{Interval: 30 * time.Second, Clock: w.clk})
		if err != nil {
			t.Fatal(err)
		}
	}
	open()
	t.Cleanup(func() { store.Close() })
	_ = e.Tick(t.Context()) // the first reading
	for range 20 + r.IntN(40) {
		id := fmt.Sprintf("e%d", r.IntN(n))
		now := w.clk.Now()
		w.cal.mu.Lock()
		m, there := w.cal.events[id]
		w.cal.mu.Unlock()
		switch op := r.IntN(6); {
		case !there || op == 0:
			m = event(id, titles[r.IntN(len(titles))], now.Add(time.Duration(1+r.IntN(100))*time.Hour), now)
			w.cal.put(m)
		case op == 1:
			w.cal.remove(id)
		case op == 2:
			m.Start, m.End, m.Updated = m.Start.Add(time.Duration(r.IntN(5)-2)*time.Hour), m.End.Add(time.Duration(r.IntN(5)-2)*time.Hour), now
			if !m.End.After(m.Start) {
				m.End = m.Start.Add(time.Hour)
			}
			w.cal.put(m)
		case op == 3:
			m.Title, m.Updated = titles[r.IntN(len(titles))], now
			w.cal.put(m)
		case op == 4:
			m.Location, m.Updated = places[r.IntN(len(places))], now
			w.cal.put(m)
		default:
			m.Response, m.Updated = meetingbot.ResponseAccepted, now // an RSVP write: no news
			w.cal.put(m)
		}
		switch r.IntN(8) {
		case 0:
			die = true // the next record dies
		case 1:
			w.posts.mu.Lock()
			w.posts.fail = meetingbot.ErrUnconfirmed // Slack's answer is lost
			w.posts.mu.Unlock()
		}
		w.clk.Advance(time.Duration(r.IntN(90)) * time.Second)
		if _ = e.Tick(t.Context()); led.dead {
			open() // killed between a post and its record
		}
		if r.IntN(6) == 0 {
			open() // a restart
		}
	}
	// Everything settles: no more faults, passes past every lease and
	// settle time.
	die = false
	w.posts.mu.Lock()
	w.posts.fail = nil
	w.posts.mu.Unlock()
	open()
	for range 10 {
		w.clk.Advance(time.Minute)
		if err := e.Tick(t.Context()); err != nil {
			t.Fatalf("a pass after the faults: %v", err)
		}
	}
	checkRandom(t, w, initial)
}

// checkRandom is the oracle of a random case.
func checkRandom(t *testing.T, w *world, initial map[string]bool) {
	t.Helper()
	posted := map[string]int{}
	last := map[string]meetingbot.Notice{}
	w.posts.mu.Lock()
	for _, msg := range w.posts.messages {
		for _, n := range msg {
			posted[n.Key]++
			last[n.Meeting().ID] = n
		}
	}
	w.posts.mu.Unlock()
	for key, c := range posted {
		if c > 1 {
			t.Errorf("notice %s posted %d times", key, c)
		}
	}
	now := w.clk.Now()
	horizon := now.Add(7 * 24 * time.Hour)
	w.cal.mu.Lock()
	defer w.cal.mu.Unlock()
	for id, m := range w.cal.events {
		n, told := last[id]
		switch {
		case !m.Start.After(now) || m.Start.After(horizon):
		case !told && !initial[id]:
			t.Errorf("event %s (%s at %v) was never told", id, m.Title, m.Start)
		case told && n.Now.ID == "":
			t.Errorf("event %s is there (%s at %v), but the channel last heard it was cancelled", id, m.Title, m.Start)
		case told && meetingbot.FeedState(n.Now) != meetingbot.FeedState(m):
			t.Errorf("event %s ended as %s at %v in %q, but the channel last heard %s at %v in %q", id, m.Title, m.Start, m.Location, n.Now.Title, n.Now.Start, n.Now.Location)
		}
	}
	for id, n := range last {
		if _, there := w.cal.events[id]; !there && n.Now.ID != "" && n.Now.Start.After(now) && !n.Now.Start.After(horizon) {
			t.Errorf("event %s was cancelled, but the channel last heard it at %v", id, n.Now.Start)
		}
	}
}
