package snooze_test

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/snooze"
	"github.com/meetingbot/meetingbot/storage/postgres"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
	"github.com/meetingbot/meetingbot/storage/sqlite"
	"github.com/meetingbot/meetingbot/timer"
	"github.com/stretchr/testify/require"
)

var (
	randomCases = flag.Int("random.cases", 100, "cases of TestRandomSnoozesCrashesAndProcesses")
	randomSeed  = flag.Uint64("random.seed", 1, "first seed of TestRandomSnoozesCrashesAndProcesses")
)

var t0 = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

// poll is how often a process reads the store for what the others added
// (timer.Options.Poll; TICK_INTERVAL in the bot).
const poll = 30 * time.Second

// TestRandomSnoozesCrashesAndProcesses runs snoozes of meetings that move
// (earlier and later), are cancelled and declined, through one or two
// processes on one SQLite file or, one case in five when a test server
// answers, one PostgreSQL schema; the processes step in turn, at once (in
// goroutines, racing for the same due timers), or run their engines' Run
// (sleeping on the clock and woken). Processes crash before or after any
// call to the store, the ledger or Slack and restart after random
// downtimes; a crash on SQLite frees the process's flock at once, as the
// kernel does, and on PostgreSQL leaves its heartbeat and its leases to
// run out. Clicks come twice and reach both processes; Slack loses
// answers after taking messages and fails lookups for a while. The bot
// learns of each move as the mirror tells it (Follow) or, when that is
// lost, at its catch-up (FollowAll, at boot and every 10 minutes). After
// each case, every process up until the timers are settled, it checks:
//   - none lost: every timer ended; one ended "meeting ended" had its
//     meeting end before anything could send it;
//   - none twice: no key delivered twice, no more DMs per person, meeting
//     and mode than clicks that made a timer;
//   - none wrong: every DM of a meeting there at that instant, naming its
//     start then and saying whether it moved, not before its instant nor
//     after the meeting's end;
//   - on time: an "in 5 min" DM at its instant, and an "at start" one at
//     the meeting's start then (moved timers at the new start), unless a
//     process died, none was up, Slack lost the answer or a lookup, or the
//     move was learned only after the start.
//
// A failure prints its seed; rerun it with -random.seed=N -random.cases=1
// (cases whose processes run at once may take another path).
func TestRandomSnoozesCrashesAndProcesses(t *testing.T) {
	cases := *randomCases
	if testing.Short() || raceEnabled {
		cases = min(cases, 20) // SQLite under the race detector is slow; CI runs the full count without it
	}
	pg := false // a PostgreSQL test server answers (pgtest.Server skips the subtest when none does)
	t.Run("postgres", func(t *testing.T) {
		pgtest.Server(t)
		pg = true
	})
	var total stats
	for i := range cases {
		seed := *randomSeed + uint64(i)
		st, err := runCase(t, seed, pg && seed%5 == 0)
		require.NoError(t, err, "seed %d (%s)", seed, st.kind)
		total.add(st)
	}
	t.Logf("%d cases (%d on PostgreSQL, where %d timers were held by a process that died; %d of two processes at once; %d driven by Run): "+
		"%d clicks (%d double, %d to both processes), "+
		"%d timers added, %d crashes, %d restarts after downtime; %d DMs (%d at their instant, %d late and excused), "+
		"%d moved with their meeting (%d before their instant, %d sent at the new start), %d ended for a cancelled meeting (%d declined), "+
		"%d for one that had ended; %d sends unconfirmed, %d lookups failed, %d duplicates",
		cases, total.pg, total.heldAtCrash, total.concurrent, total.run, total.clicks, total.doubles, total.both,
		total.added, total.crashes, total.downtimes, total.delivered, total.onTime, total.late,
		total.moved, total.rekeyed, total.movedOnTime, total.cancelled, total.declined,
		total.ended, total.unconfirmed, total.lookupsFailed, total.duplicates)
	if cases < 100 {
		return // too few to count on every kind of trouble; CI runs the full count without the race detector
	}
	met := []int{total.crashes, total.delivered, total.onTime, total.late, total.moved, total.rekeyed, total.movedOnTime,
		total.cancelled, total.declined, total.ended, total.both, total.doubles, total.unconfirmed, total.lookupsFailed,
		total.concurrent, total.run}
	if pg {
		met = append(met, total.pg, total.heldAtCrash)
	}
	for _, n := range met {
		if n == 0 {
			require.Fail(t, "the cases exercised too little", "%+v", total)
		}
	}
}

type stats struct {
	kind                                             string
	pg, concurrent, run, heldAtCrash                 int
	clicks, doubles, both, added, crashes, downtimes int
	delivered, onTime, late, moved, rekeyed          int
	movedOnTime, cancelled, declined, ended          int
	unconfirmed, lookupsFailed, duplicates           int
}

func (s *stats) add(o stats) {
	for i, n := range []int{o.pg, o.concurrent, o.run, o.heldAtCrash, o.clicks, o.doubles, o.both, o.added, o.crashes, o.downtimes,
		o.delivered, o.onTime, o.late, o.moved, o.rekeyed, o.movedOnTime, o.cancelled, o.declined, o.ended,
		o.unconfirmed, o.lookupsFailed, o.duplicates} {
		*[]*int{&s.pg, &s.concurrent, &s.run, &s.heldAtCrash, &s.clicks, &s.doubles, &s.both, &s.added, &s.crashes, &s.downtimes,
			&s.delivered, &s.onTime, &s.late, &s.moved, &s.rekeyed, &s.movedOnTime, &s.cancelled, &s.declined, &s.ended,
			&s.unconfirmed, &s.lookupsFailed, &s.duplicates}[i] += n
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// bot is one process: its store, timer engine and click service.
type bot struct {
	store   caseStore
	p       *process
	engine  *timer.Engine
	service *snooze.Service
	w       *runWatch
	stop    func() // ends Run
	downTil time.Time
	caught  time.Time // its last catch-up
}

func (b *bot) up() bool { return b.downTil.IsZero() && !b.p.isDead() }

// runCase runs the case of seed, on PostgreSQL when pg.
func runCase(t *testing.T, seed uint64, pg bool) (stats, error) {
	rng := rand.New(rand.NewPCG(seed, 0x5a002e))
	ctx := context.Background()
	var st stats
	horizon := 60 * time.Minute
	tl := newTimeline(rng, horizon)
	clicks := newClicks(rng, tl, &st)
	procs := 1 + rng.IntN(2)
	mode := "stepped"
	switch {
	case rng.IntN(3) == 0:
		mode, st.run = "run", 1
	case procs == 2 && rng.IntN(2) == 0:
		mode, st.concurrent = "concurrent", 1
	}
	crashOdds := 15 // percent of steps that arm a crash
	if pg {
		crashOdds = 30 // more dying holders, whose leases run out
	}
	st.kind = fmt.Sprintf("%d processes, %s, PostgreSQL %v", procs, mode, pg)

	c := clock.NewFake(t0)
	tl.now = c.Now
	sl := &fakeSlack{now: c.Now}
	tr := &trouble{rng: rand.New(rand.NewPCG(seed, 0x7b0b1e)), st: &st, at: map[string][]time.Time{}}
	if rng.IntN(2) == 0 {
		tr.unconfirmed, tr.lookupFail = 20, 40
	}
	rec := &record{tl: tl, trouble: tr.at, learned: map[string][]learn{}, clicks: map[string][]clickAdded{}}
	var open func(p *process) (caseStore, error)
	if pg {
		st.pg = 1
		url := pgtest.URL(t)
		open = func(p *process) (caseStore, error) {
			return postgres.Open(ctx, url, postgres.Options{Interval: 30 * time.Second, Now: p.clock})
		}
	} else {
		path := filepath.Join(t.TempDir(), "bot.db")
		open = func(*process) (caseStore, error) { return sqlite.Open(ctx, path) }
	}
	var zombies []caseStore // PostgreSQL stores of processes that died: their rows run out
	subs := func(ctx context.Context, id string) (meetingbot.Subscription, bool, error) {
		return meetingbot.Subscription{ID: id, CalendarID: "cal"}, id == "sub", nil
	}
	learnt := func(ms []meetingbot.Meeting) {
		for _, m := range ms {
			rec.learned[m.ID] = append(rec.learned[m.ID], learn{at: c.Now(), start: m.Start})
		}
	}
	catchUp := func(b *bot) {
		b.caught = c.Now()
		reading := tl.reading(c.Now())
		if _, err := b.service.FollowAll(ctx, func(context.Context, string) ([]meetingbot.Meeting, bool, error) { return reading, true, nil }); err == nil {
			learnt(reading)
		}
		b.woken()
	}
	boot := func(b *bot) error {
		p := &process{crashAt: -1, now: c.Now}
		store, err := open(p)
		if err != nil {
			return err
		}
		*b = bot{store: store, p: p}
		var clk clock.Clock = c
		if mode == "run" {
			b.w = &runWatch{}
			clk = watchClock{Fake: c, w: b.w}
		}
		cs := crashStore{caseStore: store, p: p, w: b.w, note: rec.note}
		rec.note("", "%v %s boots (%s)", c.Now().Format("15:04:05.000"), store.Owner(), mode)
		h, err := snooze.NewHandler(tl, crashNotifier{sl, p, tr}, cs, snooze.Options{Clock: c, Logger: discard()})
		if err != nil {
			return err
		}
		b.engine, err = timer.New(cs, map[string]timer.Handler{meetingbot.TimerKindSnooze: h}, timer.Options{Clock: clk, Logger: discard(), Poll: poll})
		if err != nil {
			return err
		}
		b.service = snooze.NewService(b.engine, cs, subs, c.Now, discard())
		if mode == "run" {
			b.w.engine = b.engine
			runCtx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = b.engine.Run(runCtx)
			}()
			b.stop = func() { cancel(); <-done }
		}
		catchUp(b)
		return nil
	}
	bots := make([]*bot, procs)
	for i := range bots {
		bots[i] = &bot{}
		if err := boot(bots[i]); err != nil {
			return st, err
		}
	}
	defer func() {
		for _, b := range bots {
			b.halt()
			if b.store != nil {
				b.store.Close()
			}
		}
		for _, z := range zombies {
			z.Close()
		}
	}()

	var changes []time.Time // when the calendar changed, for the mirror to tell
	for _, v := range tl.versions {
		if v.from.After(t0) {
			changes = append(changes, v.from)
		}
	}
	end := t0.Add(horizon + 2*time.Hour)
	calm := t0.Add(horizon + 40*time.Minute) // from then on nothing crashes, so every timer settles
	// The whole bot down, one case in two, from a little before a snoozed
	// meeting's start until past its end: it ends unreminded.
	var outage [2]time.Time
	if len(clicks) > 0 && rng.IntN(2) == 0 {
		k := clicks[rng.IntN(len(clicks))]
		outage[0] = later(k.at.Add(time.Second), k.start.Add(-time.Duration(rng.Int64N(int64(5*time.Minute)))))
		outage[1] = outage[0].Add(35*time.Minute + time.Duration(rng.Int64N(int64(25*time.Minute))))
	}
	for now := t0; now.Before(end); now = c.Now() {
		for _, b := range bots {
			if !b.downTil.IsZero() && !now.Before(b.downTil) {
				if err := boot(b); err != nil {
					return st, err
				}
			}
		}
		if !outage[0].IsZero() && !now.Before(outage[0]) {
			for _, b := range bots {
				if b.up() {
					b.p.kill()
				}
			}
			outage[0] = time.Time{}
		}
		live := func() []*bot {
			var out []*bot
			for _, b := range bots {
				if b.up() {
					out = append(out, b)
				}
			}
			return out
		}
		// The mirror tells one process of what a sync wrote; the tell is
		// lost one time in three (a process that died between writing the
		// change and following it), and the catch-ups find it.
		for len(changes) > 0 && !changes[0].After(now) {
			if l := live(); len(l) > 0 && rng.IntN(3) > 0 {
				var changed []meetingbot.Meeting
				for _, v := range tl.versions {
					if v.from.Equal(changes[0]) {
						changed = append(changed, v.meeting())
					}
				}
				if _, err := l[0].service.Follow(ctx, "cal", changed); err == nil {
					learnt(changed)
				}
				l[0].woken()
			}
			changes = changes[1:]
		}
		for _, b := range live() {
			if now.Sub(b.caught) >= 10*time.Minute {
				catchUp(b)
			}
		}
		for i := 0; i < len(clicks); i++ {
			k := clicks[i]
			if k.at.After(now) {
				continue
			}
			l := live()
			if len(l) == 0 {
				clicks[i].at = now.Add(time.Second) // Slack shows an error; the person clicks again
				continue
			}
			to := l[:1]
			if k.both && len(l) == 2 {
				to = l
				st.both++
			}
			for _, b := range to {
				answer, err := press(ctx, b.service, k.user, k.action, k.value, k.stamp)
				if err != nil {
					return st, fmt.Errorf("click at %v: %w", now, err)
				}
				if strings.Contains(answer, "I'll remind you") && !strings.HasPrefix(answer, "Already set") {
					group := groupOfClick(k, answer)
					rec.clicks[group] = append(rec.clicks[group], clickAdded{at: now, start: k.start})
				}
				b.woken()
			}
			st.clicks++
			clicks = append(clicks[:i], clicks[i+1:]...)
			i--
		}

		next := now.Add(30 * time.Second)
		for _, k := range clicks {
			next = earlier(next, k.at)
		}
		if len(changes) > 0 {
			next = earlier(next, changes[0])
		}
		if !outage[0].IsZero() {
			next = earlier(next, outage[0])
		}
		l := live()
		for _, b := range l {
			next = earlier(next, b.caught.Add(10*time.Minute))
			if now.Before(calm) && rng.IntN(100) < crashOdds {
				b.p.arm(rng)
			}
		}
		wakes, err := work(mode, l, c)
		if err != nil {
			return st, fmt.Errorf("at %v: %w", now, err)
		}
		for _, w := range wakes {
			next = earlier(next, later(w, now.Add(time.Millisecond)))
		}
		for _, b := range bots {
			if b.downTil.IsZero() && b.p.isDead() {
				b.halt()
				if pg {
					zombies = append(zombies, b.store) // a SIGKILL's end: its heartbeat and leases run out
					if held, err := heldBy(b.store); err == nil {
						st.heldAtCrash += held
					}
				} else {
					b.store.Close() // the kernel frees a dead process's flock at once
				}
				b.store = nil
				st.crashes++
				rec.crashes = append(rec.crashes, b.p.died)
				rec.note("", "%v a process died (seen at %v)", b.p.died.Format("15:04:05.000"), now.Format("15:04:05.000"))
				b.downTil = now.Add(time.Second)
				if now.Before(outage[1]) && outage[0].IsZero() {
					b.downTil = outage[1]
				} else if rng.IntN(3) == 0 {
					b.downTil = now.Add(time.Duration(rng.Int64N(int64(45*time.Minute/time.Second))+1) * time.Second)
					st.downtimes++
				}
			}
			b.p.disarm()
			if !b.downTil.IsZero() {
				next = earlier(next, b.downTil)
			}
		}
		next = later(next, now.Add(time.Millisecond))
		if len(live()) == 0 {
			rec.noneUp = append(rec.noneUp, [2]time.Time{now, next})
		}
		c.Set(next)
	}
	if mode == "run" {
		if _, err := work(mode, bots, c); err != nil { // idle before the store is read
			return st, err
		}
	}

	all, err := bots[0].store.TimerRange(ctx, t0.Add(-time.Hour), forever)
	if err != nil {
		return st, err
	}
	rec.timers, rec.dms = all, sl.dms
	if err := rec.check(&st); err != nil {
		return st, fmt.Errorf("%w; what happened:\n%s", err, rec.story(err.Error()))
	}
	return st, nil
}

// work has the live processes do what is due at the clock's now, and
// returns when each wants to be woken: stepped, one after the other;
// concurrent, all at once; run, waiting for each engine's Run to be idle.
func work(mode string, live []*bot, c *clock.Fake) ([]time.Time, error) {
	var mu sync.Mutex
	var wakes []time.Time
	step := func(b *bot) {
		// Passes until one finds nothing due, as the engine wakes itself
		// after a fire that moved a timer or gave it back.
		var wake time.Time
		for range 20 {
			wake = b.engine.Tick(context.Background())
			b.engine.Wait()
			if !b.p.fired() || b.p.isDead() {
				break
			}
		}
		if !wake.IsZero() {
			mu.Lock()
			wakes = append(wakes, wake)
			mu.Unlock()
		}
	}
	switch mode {
	case "stepped":
		for _, b := range live {
			step(b)
		}
	case "concurrent":
		var wg sync.WaitGroup
		for _, b := range live {
			wg.Go(func() { step(b) })
		}
		wg.Wait()
	case "run":
		for _, b := range live {
			deadline := time.Now().Add(30 * time.Second)
			for {
				idle, until := b.w.idle()
				if idle {
					wakes = append(wakes, c.Now().Add(until-c.Elapsed()))
					break
				}
				if time.Now().After(deadline) {
					return nil, fmt.Errorf("an engine driven by Run never went idle")
				}
				time.Sleep(50 * time.Microsecond)
			}
		}
	}
	return wakes, nil
}

// heldBy counts the pending timers a dead process's store holds, which the
// others take only once its heartbeat and their leases ran out.
func heldBy(s caseStore) (int, error) {
	all, err := s.TimerRange(context.Background(), t0.Add(-time.Hour), forever)
	n := 0
	for _, t := range all {
		if t.State == meetingbot.TimerPending && t.Holder == s.Owner() {
			n++
		}
	}
	return n, err
}

// woken tells the engine driven by Run that the case added or moved a
// timer, which its next pass must see.
func (b *bot) woken() {
	if b.w != nil {
		b.w.woken()
		b.engine.Wake()
	}
}

// halt ends the engine's Run, if it runs.
func (b *bot) halt() {
	if b.stop != nil {
		b.stop()
		b.stop = nil
	}
}

func later(ts ...time.Time) time.Time {
	out := ts[0]
	for _, t := range ts[1:] {
		if t.After(out) {
			out = t
		}
	}
	return out
}

func earlier(ts ...time.Time) time.Time {
	out := ts[0]
	for _, t := range ts[1:] {
		if t.Before(out) {
			out = t
		}
	}
	return out
}
