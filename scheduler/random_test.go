package scheduler_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/scheduler"
	"github.com/meetingbot/meetingbot/storage"
)

var (
	randomCases = flag.Int("random.cases", 2000, "cases of TestRandomCalendarsTicksAndCrashes")
	randomSeed  = flag.Uint64("random.seed", 1, "first seed of TestRandomCalendarsTicksAndCrashes")
)

// TestRandomCalendarsTicksAndCrashes runs the scheduler over random calendars
// (creates, moves, cancels, late creations), random tick instants (gaps and
// repeats) and random crashes between any two of its calls to the ledger or
// to Slack, and checks the contract after each case:
//   - every trigger whose [triggerAt, start) held a completed tick while
//     that version of the meeting existed was delivered;
//   - nothing was delivered for a meeting that was cancelled, moved away,
//     or had started;
//   - a key was delivered twice only where a crash fell between Slack
//     accepting it and the ledger recording it, and never when the notifier
//     can look the message up.
//
// A failure prints its seed; rerun it with -random.seed=N -random.cases=1.
func TestRandomCalendarsTicksAndCrashes(t *testing.T) {
	cases := *randomCases
	if testing.Short() || raceEnabled {
		cases = min(cases, 150)
	}
	var total stats
	for i := range cases {
		seed := *randomSeed + uint64(i)
		st, err := runRandomCase(t.TempDir(), seed)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		total.add(st)
	}
	t.Logf("%d cases: %d ticks, %d crashes (%d between send and record), %d reminders expected, %d delivered, %d duplicates",
		cases, total.ticks, total.crashes, total.atRisk, total.expected, total.delivered, total.duplicates)
	if total.crashes == 0 || total.atRisk == 0 || total.expected == 0 {
		t.Fatalf("the cases exercised too little: %+v", total)
	}
}

type stats struct{ ticks, crashes, atRisk, expected, delivered, duplicates int }

func (s *stats) add(o stats) {
	s.ticks += o.ticks
	s.crashes += o.crashes
	s.atRisk += o.atRisk
	s.expected += o.expected
	s.delivered += o.delivered
	s.duplicates += o.duplicates
}

// version is one start time of a meeting, present in the calendar during
// [from, to).
type version struct {
	id       string
	start    time.Time
	from, to time.Time
}

// timeline is a calendar whose content depends on the clock.
type timeline struct {
	now      func() time.Time
	versions []version
}

func (tl *timeline) Meetings(ctx context.Context, sub scheduler.Subscription, from, to time.Time) ([]scheduler.Meeting, error) {
	now := tl.now()
	var out []scheduler.Meeting
	for _, v := range tl.versions {
		if !now.Before(v.from) && now.Before(v.to) && v.start.After(from) && !v.start.After(to) {
			out = append(out, scheduler.Meeting{ID: v.id, Title: v.id, Start: v.start, End: v.start.Add(30 * time.Minute)})
		}
	}
	return out, nil
}

var errCrashed = errors.New("process crashed")

// process decides when a simulated process dies: before, or just after, its
// n-th call to the ledger or to Slack. A dead process's calls do nothing.
type process struct {
	mu      sync.Mutex
	calls   int
	crashAt int // -1: never
	after   bool
	dead    bool
}

// enter reports whether the call may go ahead, and whether the process
// died just now, before this call.
func (p *process) enter() (ok, diedHere bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return false, false
	}
	if p.calls == p.crashAt && !p.after {
		p.dead = true
		return false, true
	}
	return true, false
}

// leave reports whether the process survived the call it just made.
func (p *process) leave() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.calls
	p.calls++
	if n == p.crashAt && p.after {
		p.dead = true
	}
	return !p.dead
}

type crashLedger struct {
	*storage.Store
	p      *process
	atRisk map[string]int
}

func guard[T any](p *process, f func() (T, error)) (T, error) {
	var zero T
	if ok, _ := p.enter(); !ok {
		return zero, errCrashed
	}
	v, err := f()
	if !p.leave() {
		return zero, errCrashed
	}
	return v, err
}

func (l crashLedger) Cursors(ctx context.Context) (map[string]time.Time, error) {
	return guard(l.p, func() (map[string]time.Time, error) { return l.Store.Cursors(ctx) })
}
func (l crashLedger) AdvanceCursors(ctx context.Context, c map[string]time.Time) error {
	_, err := guard(l.p, func() (int, error) { return 0, l.Store.AdvanceCursors(ctx, c) })
	return err
}
func (l crashLedger) Entries(ctx context.Context, sub string, keys []string) (map[string]storage.Entry, error) {
	return guard(l.p, func() (map[string]storage.Entry, error) { return l.Store.Entries(ctx, sub, keys) })
}
func (l crashLedger) Orphans(ctx context.Context, now time.Time) ([]storage.Entry, error) {
	return guard(l.p, func() ([]storage.Entry, error) { return l.Store.Orphans(ctx, now) })
}
func (l crashLedger) Claim(ctx context.Context, e storage.Entry, now, until time.Time) (storage.ClaimStatus, storage.Entry, error) {
	var prev storage.Entry
	st, err := guard(l.p, func() (storage.ClaimStatus, error) {
		var err error
		var st storage.ClaimStatus
		st, prev, err = l.Store.Claim(ctx, e, now, until)
		return st, err
	})
	return st, prev, err
}
func (l crashLedger) Settle(ctx context.Context, e storage.Entry, now time.Time) error {
	if ok, diedHere := l.p.enter(); !ok {
		if diedHere && e.Outcome == storage.Sent {
			l.atRisk[e.Subscription+"|"+e.Key]++ // Slack has it; the ledger will not
		}
		return errCrashed
	}
	_, err := guard(l.p, func() (int, error) { return 0, l.Store.Settle(ctx, e, now) })
	return err
}
func (l crashLedger) Renew(ctx context.Context, e storage.Entry, until time.Time) error {
	_, err := guard(l.p, func() (int, error) { return 0, l.Store.Renew(ctx, e, until) })
	return err
}
func (l crashLedger) Release(ctx context.Context, e storage.Entry, reason string) error {
	_, err := guard(l.p, func() (int, error) { return 0, l.Store.Release(ctx, e, reason) })
	return err
}
func (l crashLedger) Prune(ctx context.Context, before time.Time) (int64, error) {
	return guard(l.p, func() (int64, error) { return l.Store.Prune(ctx, before) })
}

type crashNotifier struct {
	slack  *slack
	p      *process
	atRisk map[string]int // key -> crashes between Slack's acceptance and the ledger
}

func (n crashNotifier) Notify(ctx context.Context, r scheduler.Reminder) (scheduler.Receipt, error) {
	if ok, _ := n.p.enter(); !ok {
		return scheduler.Receipt{}, errCrashed
	}
	rc, err := n.slack.Notify(ctx, r)
	if !n.p.leave() {
		n.atRisk[r.Subscription.ID+"|"+r.Key]++
		return scheduler.Receipt{}, errCrashed
	}
	return rc, err
}

func (n crashNotifier) Delivered(ctx context.Context, r scheduler.Reminder) (scheduler.Receipt, bool, error) {
	if ok, _ := n.p.enter(); !ok {
		return scheduler.Receipt{}, false, errCrashed
	}
	rc, ok, err := n.slack.Delivered(ctx, r)
	if !n.p.leave() {
		return scheduler.Receipt{}, false, errCrashed
	}
	return rc, ok, err
}

func runRandomCase(dir string, seed uint64) (stats, error) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	ctx := context.Background()
	start := t0
	horizon := 90 * time.Minute
	roundTo := func(t time.Time) time.Time { return t.Truncate(30 * time.Second) }
	randIn := func(a, b time.Time) time.Time {
		if !b.After(a) {
			return roundTo(a)
		}
		return roundTo(a.Add(time.Duration(rng.Int64N(int64(b.Sub(a)) + 1))))
	}
	forever := start.Add(100 * time.Hour)

	// Calendar: meetings with a history of moves and cancels.
	var tl timeline
	for i := range 1 + rng.IntN(6) {
		id := fmt.Sprintf("m%d", i)
		from := start.Add(-time.Hour)
		if rng.IntN(10) < 3 {
			from = randIn(start, start.Add(horizon)) // created late
		}
		s := randIn(start.Add(time.Minute), start.Add(horizon))
		for change := 0; ; change++ {
			to := forever
			if change < 2 && rng.IntN(10) < 4 {
				to = randIn(from, s.Add(5*time.Minute))
			}
			tl.versions = append(tl.versions, version{id: id, start: s, from: from, to: to})
			if to == forever || rng.IntN(10) < 3 { // cancelled
				break
			}
			from, s = to, randIn(to.Add(-10*time.Minute), start.Add(horizon))
		}
	}

	// Subscriptions on that calendar, each with its offsets.
	offsets := []time.Duration{0, time.Minute, 5 * time.Minute, 10 * time.Minute}
	var subs []scheduler.Subscription
	for i := range 1 + rng.IntN(2) {
		var offs []time.Duration
		for _, o := range offsets {
			if rng.IntN(2) == 0 {
				offs = append(offs, o)
			}
		}
		if len(offs) == 0 {
			offs = []time.Duration{10 * time.Minute}
		}
		subs = append(subs, scheduler.Subscription{ID: fmt.Sprintf("s%d", i), CalendarID: "cal", Offsets: offs})
	}

	// Ticks, with gaps and repeats.
	var ticks []time.Time
	for tk := start; tk.Before(start.Add(horizon + 15*time.Minute)); {
		ticks = append(ticks, tk)
		switch r := rng.IntN(20); {
		case r < 13:
			tk = tk.Add(30 * time.Second)
		case r < 15: // repeat
		case r < 17:
			tk = tk.Add(time.Duration(1+rng.IntN(10)) * time.Second)
		default:
			tk = tk.Add(time.Duration(2+rng.IntN(18)) * time.Minute)
		}
	}

	c := &clock{t: start}
	tl.now = c.Now
	sl := newSlack(c.Now)
	sl.canLookup = rng.IntN(2) == 0
	atRisk := map[string]int{}
	path := filepath.Join(dir, fmt.Sprintf("case-%d.db", seed))

	var st stats
	var store *storage.Store
	var sched *scheduler.Scheduler
	var proc *process
	boot := func() error {
		if store != nil {
			store.Close()
		}
		var err error
		if store, err = storage.Open(ctx, path); err != nil {
			return err
		}
		proc = &process{crashAt: -1}
		sched, err = scheduler.New(subs, &tl, crashNotifier{sl, proc, atRisk}, crashLedger{store, proc, atRisk},
			scheduler.Options{Now: c.Now, Logger: discardLogger(), Workers: 1, Interval: 30 * time.Second})
		return err
	}
	if err := boot(); err != nil {
		return st, err
	}
	defer func() { store.Close() }()

	var completed []time.Time
	for _, tk := range ticks {
		c.Set(tk)
		if rng.IntN(100) < 12 {
			proc.mu.Lock()
			proc.crashAt, proc.after = proc.calls+rng.IntN(12), rng.IntN(2) == 0
			proc.mu.Unlock()
		}
		err := sched.Tick(ctx)
		st.ticks++
		if proc.dead {
			st.crashes++
			if err := boot(); err != nil {
				return st, err
			}
			continue
		}
		if err != nil {
			return st, fmt.Errorf("Tick(%v) = %v", tk, err)
		}
		proc.mu.Lock()
		proc.crashAt = -1
		proc.mu.Unlock()
		completed = append(completed, tk)
	}

	// The oracle.
	delivered := map[string]int{}
	for _, d := range sl.Deliveries() {
		k := d.Subscription.ID + "|" + d.Key
		delivered[k]++
		ok := false
		for _, v := range tl.versions {
			if v.id == d.Meeting.ID && v.start.Equal(d.Meeting.Start) && !d.At.Before(v.from) && d.At.Before(v.to) {
				ok = true
			}
		}
		end := d.Meeting.Start
		if d.Offset == 0 {
			end = end.Add(time.Minute)
		}
		if !ok || d.At.Before(d.TriggerAt) || !d.At.Before(end) {
			return st, fmt.Errorf("delivered %s at %v: not due then (cancelled, moved or started)", k, d.At)
		}
	}
	expected := map[string]bool{}
	for _, s := range subs {
		for _, v := range tl.versions {
			for _, o := range s.Offsets {
				lo, hi := v.start.Add(-o), v.start
				if o == 0 {
					hi = hi.Add(time.Minute)
				}
				lo, hi = later(lo, v.from), earlier(hi, v.to)
				for _, tk := range completed {
					if !tk.Before(lo) && tk.Before(hi) {
						expected[s.ID+"|"+scheduler.Key(v.id, o, v.start)] = true
						break
					}
				}
			}
		}
	}
	keys := make([]string, 0, len(expected))
	for k := range expected {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if delivered[k] == 0 {
			return st, fmt.Errorf("missed %s (lookup=%v)", k, sl.canLookup)
		}
	}
	for k, n := range delivered {
		st.delivered += n
		if n == 1 {
			continue
		}
		if n-1 > atRisk[k] {
			return st, fmt.Errorf("%s delivered %d times, with %d crashes between send and record", k, n, atRisk[k])
		}
		if sl.canLookup {
			return st, fmt.Errorf("%s delivered %d times although the notifier can look messages up", k, n)
		}
		st.duplicates += n - 1
	}
	for _, n := range atRisk {
		st.atRisk += n
	}
	st.expected = len(expected)
	return st, nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
