package snooze_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/clock"
	"github.com/meetingbot/meetingbot/snooze"
	"github.com/meetingbot/meetingbot/storage"
	"github.com/meetingbot/meetingbot/timer"
	"github.com/stretchr/testify/require"
)

var (
	randomCases = flag.Int("random.cases", 100, "cases of TestRandomSnoozesCrashesAndProcesses")
	randomSeed  = flag.Uint64("random.seed", 1, "first seed of TestRandomSnoozesCrashesAndProcesses")
)

var t0 = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

// TestRandomSnoozesCrashesAndProcesses runs snoozes of meetings that move
// and are cancelled through one or two processes on one SQLite file, with
// random crashes before or after any call to the store, the ledger or
// Slack, restarts after random downtimes, double clicks and one click
// reaching both processes, Slack's answers lost after it stored a message
// and lookups that fail for a while; after each case, with every process
// up again until the timers are settled, it checks:
//   - none lost: every timer added ended, and every wait whose meeting was
//     there at its instant and had not ended got its DM;
//   - none twice: no key was delivered twice;
//   - none wrong: every DM was of a meeting there at that instant, not
//     before its instant, not after the meeting's end; an "at start" DM at
//     or after the start it names.
//
// A failure prints its seed; rerun it with -random.seed=N -random.cases=1.
func TestRandomSnoozesCrashesAndProcesses(t *testing.T) {
	cases := *randomCases
	if testing.Short() || raceEnabled {
		cases = min(cases, 20) // SQLite under the race detector is slow; CI runs the full count without it
	}
	var total stats
	for i := range cases {
		seed := *randomSeed + uint64(i)
		st, err := runCase(t.TempDir(), seed)
		require.NoError(t, err, "seed %d", seed)
		total.add(st)
	}
	t.Logf("%d cases: %d clicks (%d double, %d to both processes), %d timers added, %d crashes, %d restarts after downtime; "+
		"%d DMs (%d at their instant, %d late), %d moved with their meeting, %d ended for a cancelled meeting, %d for one that had ended; "+
		"%d sends unconfirmed, %d lookups failed, %d duplicates",
		cases, total.clicks, total.doubles, total.both, total.added, total.crashes, total.downtimes,
		total.delivered, total.onTime, total.late, total.moved, total.cancelled, total.ended,
		total.unconfirmed, total.lookupsFailed, total.duplicates)
	if cases < 100 {
		return // too few to count on every kind of trouble; CI runs the full count without the race detector
	}
	if total.crashes == 0 || total.delivered == 0 || total.onTime == 0 || total.late == 0 || total.moved == 0 ||
		total.cancelled == 0 || total.ended == 0 || total.both == 0 || total.doubles == 0 || total.unconfirmed == 0 || total.lookupsFailed == 0 {
		require.Fail(t, "the cases exercised too little", "%+v", total)
	}
}

type stats struct {
	clicks, doubles, both, added, crashes, downtimes int
	delivered, onTime, late, moved, cancelled, ended int
	unconfirmed, lookupsFailed, duplicates           int
}

func (s *stats) add(o stats) {
	s.clicks += o.clicks
	s.doubles += o.doubles
	s.both += o.both
	s.added += o.added
	s.crashes += o.crashes
	s.downtimes += o.downtimes
	s.delivered += o.delivered
	s.onTime += o.onTime
	s.late += o.late
	s.moved += o.moved
	s.cancelled += o.cancelled
	s.ended += o.ended
	s.unconfirmed += o.unconfirmed
	s.lookupsFailed += o.lookupsFailed
	s.duplicates += o.duplicates
}

// version is one start of a meeting, in the calendar during [from, to).
type version struct {
	id       string
	start    time.Time
	from, to time.Time
}

func (v version) meeting() meetingbot.Meeting {
	return meetingbot.Meeting{ID: v.id, Title: "Meeting " + v.id, Start: v.start, End: v.start.Add(30 * time.Minute)}
}

// timeline is a calendar whose content depends on the clock.
type timeline struct {
	now      func() time.Time
	versions []version
}

func (tl *timeline) at(id string, t time.Time) (version, bool) {
	for _, v := range tl.versions {
		if v.id == id && !t.Before(v.from) && t.Before(v.to) {
			return v, true
		}
	}
	return version{}, false
}

func (tl *timeline) Meetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
	now := tl.now()
	var out []meetingbot.Meeting
	for _, v := range tl.versions {
		if !now.Before(v.from) && now.Before(v.to) && v.start.After(from) && !v.start.After(to) {
			out = append(out, v.meeting())
		}
	}
	return out, nil
}

func (tl *timeline) Meeting(ctx context.Context, sub meetingbot.Subscription, id string) (meetingbot.Meeting, error) {
	if v, ok := tl.at(id, tl.now()); ok {
		return v.meeting(), nil
	}
	return meetingbot.Meeting{}, meetingbot.ErrGone
}

// dm is one snooze DM Slack holds.
type dm struct {
	r     meetingbot.Reminder
	moved bool
	at    time.Time
}

// slack holds the DMs, shared by the processes.
type slack struct {
	mu  sync.Mutex
	now func() time.Time
	dms []dm
}

func (s *slack) post(r meetingbot.Reminder, moved bool) meetingbot.Receipt {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dms = append(s.dms, dm{r: r, moved: moved, at: s.now()})
	return meetingbot.Receipt{Channel: "D" + r.Subscription.Destination, TS: fmt.Sprint(len(s.dms))}
}

func (s *slack) find(r meetingbot.Reminder) (meetingbot.Receipt, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, d := range s.dms {
		if d.r.Key == r.Key && d.r.Subscription.ID == r.Subscription.ID {
			return meetingbot.Receipt{Channel: "D" + r.Subscription.Destination, TS: fmt.Sprint(i + 1)}, true
		}
	}
	return meetingbot.Receipt{}, false
}

var errCrashed = errors.New("process crashed")

// process decides when a simulated process dies: before, or just after,
// its n-th call to the store, the ledger or Slack. A dead process's calls
// do nothing.
type process struct {
	mu      sync.Mutex
	calls   int
	crashAt int // -1: never
	after   bool
	dead    bool
}

func (p *process) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return false
	}
	if p.calls == p.crashAt && !p.after {
		p.dead = true
		return false
	}
	return true
}

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

func (p *process) isDead() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dead
}

func guard[T any](p *process, f func() (T, error)) (T, error) {
	var zero T
	if !p.enter() {
		return zero, errCrashed
	}
	v, err := f()
	if !p.leave() {
		return zero, errCrashed
	}
	return v, err
}

// crashStore is a process's store: its timers' and its ledger's calls may
// be its last.
type crashStore struct {
	*storage.Store
	p *process
}

func (s crashStore) NextTimers(ctx context.Context, now time.Time) ([]meetingbot.Timer, time.Time, int, error) {
	var next time.Time
	var pending int
	due, err := guard(s.p, func() ([]meetingbot.Timer, error) {
		due, n, p, err := s.Store.NextTimers(ctx, now)
		next, pending = n, p
		return due, err
	})
	return due, next, pending, err
}
func (s crashStore) TakeTimer(ctx context.Context, key string, now time.Time, lease time.Duration) (meetingbot.Timer, bool, error) {
	var ok bool
	t, err := guard(s.p, func() (meetingbot.Timer, error) {
		t, taken, err := s.Store.TakeTimer(ctx, key, now, lease)
		ok = taken
		return t, err
	})
	return t, ok, err
}
func (s crashStore) FinishTimer(ctx context.Context, t meetingbot.Timer, now time.Time) error {
	_, err := guard(s.p, func() (int, error) { return 0, s.Store.FinishTimer(ctx, t, now) })
	return err
}
func (s crashStore) MoveTimer(ctx context.Context, old, next meetingbot.Timer, now time.Time) error {
	_, err := guard(s.p, func() (int, error) { return 0, s.Store.MoveTimer(ctx, old, next, now) })
	return err
}
func (s crashStore) RetryTimer(ctx context.Context, t meetingbot.Timer, at time.Time, reason string) error {
	_, err := guard(s.p, func() (int, error) { return 0, s.Store.RetryTimer(ctx, t, at, reason) })
	return err
}
func (s crashStore) Entries(ctx context.Context, sub string, keys []string) (map[string]meetingbot.Entry, error) {
	return guard(s.p, func() (map[string]meetingbot.Entry, error) { return s.Store.Entries(ctx, sub, keys) })
}
func (s crashStore) Claim(ctx context.Context, e meetingbot.Entry, now, until time.Time) (meetingbot.ClaimStatus, meetingbot.Entry, error) {
	var prev meetingbot.Entry
	st, err := guard(s.p, func() (meetingbot.ClaimStatus, error) {
		st, pr, err := s.Store.Claim(ctx, e, now, until)
		prev = pr
		return st, err
	})
	return st, prev, err
}
func (s crashStore) Record(ctx context.Context, e meetingbot.Entry, now time.Time) error {
	_, err := guard(s.p, func() (int, error) { return 0, s.Store.Record(ctx, e, now) })
	return err
}
func (s crashStore) Release(ctx context.Context, e meetingbot.Entry, reason string) error {
	_, err := guard(s.p, func() (int, error) { return 0, s.Store.Release(ctx, e, reason) })
	return err
}

// trouble is what goes wrong with Slack beyond crashes. Its notifier is
// called from several fires at once, so what it draws is behind mu.
type trouble struct {
	mu          sync.Mutex
	rng         *rand.Rand
	unconfirmed int // percent of posts whose answer is lost
	lookupFail  int // percent of lookups that fail
	st          *stats
}

func (t *trouble) roll(n int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rng.IntN(n)
}

func (t *trouble) count(f func(*stats)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f(t.st)
}

type crashNotifier struct {
	slack *slack
	p     *process
	t     *trouble
}

func (n crashNotifier) NotifySnooze(ctx context.Context, r meetingbot.Reminder, of meetingbot.Snooze, moved bool) (meetingbot.Receipt, error) {
	if !n.p.enter() {
		return meetingbot.Receipt{}, errCrashed
	}
	var rc meetingbot.Receipt
	var err error
	if n.t.roll(100) < n.t.unconfirmed {
		n.t.count(func(st *stats) { st.unconfirmed++ })
		if n.t.roll(2) == 0 {
			n.slack.post(r, moved)
		}
		err = fmt.Errorf("slack: answer lost: %w", meetingbot.ErrUnconfirmed)
	} else {
		rc = n.slack.post(r, moved)
	}
	if !n.p.leave() {
		return meetingbot.Receipt{}, errCrashed
	}
	return rc, err
}

func (n crashNotifier) Delivered(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, bool, error) {
	if !n.p.enter() {
		return meetingbot.Receipt{}, false, errCrashed
	}
	var rc meetingbot.Receipt
	var ok bool
	var err error
	if n.t.roll(100) < n.t.lookupFail {
		n.t.count(func(st *stats) { st.lookupsFailed++ })
		err = errors.New("slack: 503 service unavailable")
	} else {
		rc, ok = n.slack.find(r)
	}
	if !n.p.leave() {
		return meetingbot.Receipt{}, false, errCrashed
	}
	return rc, ok, err
}

// bot is one process: its store, timer engine and click service.
type bot struct {
	store   *storage.Store
	p       *process
	engine  *timer.Engine
	service *snooze.Service
	downTil time.Time // down until then; zero: up
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// click is one click on a snooze button.
type click struct {
	at, stamp time.Time // when it reaches the bot; Slack's action_ts
	user      string
	action    string
	value     string
	both      bool // reaches both processes (Slack's retry to another replica)
}

func runCase(dir string, seed uint64) (stats, error) {
	rng := rand.New(rand.NewPCG(seed, 0x5a002e))
	ctx := context.Background()
	var st stats
	horizon := 60 * time.Minute
	secs := func(d time.Duration) time.Duration {
		return time.Duration(rng.Int64N(int64(max(d, 0)/time.Second)+1)) * time.Second
	}
	forever := t0.Add(100 * time.Hour)

	// Meetings that move and are cancelled.
	var tl timeline
	for i := range 1 + rng.IntN(4) {
		id := fmt.Sprintf("m%d", i)
		from, s := t0.Add(-time.Hour), t0.Add(2*time.Minute+secs(horizon))
		for change := 0; ; change++ {
			to := forever
			if change < 2 && rng.IntN(10) < 5 {
				to = from.Add(time.Second + secs(s.Add(5*time.Minute).Sub(from)))
			}
			tl.versions = append(tl.versions, version{id: id, start: s, from: from, to: to})
			if to == forever || rng.IntN(10) < 3 { // cancelled at to
				break
			}
			from, s = to, to.Add(-10*time.Minute+secs(40*time.Minute))
		}
	}

	// Clicks on the snooze buttons of the reminders of those meetings.
	users := []string{"U1", "U2", "U3"}
	var clicks []click
	for range 1 + rng.IntN(6) {
		v := tl.versions[rng.IntN(len(tl.versions))]
		lo, hi := later(v.from, v.start.Add(-20*time.Minute), t0), earlier(v.to, v.start)
		if !hi.After(lo) {
			continue
		}
		at := lo.Add(secs(hi.Sub(lo) - time.Second))
		m := v.meeting()
		c := click{at: at, stamp: at, user: users[rng.IntN(len(users))], action: meetingbot.ActionSnoozeStart,
			value: meetingbot.SnoozeValue("sub", meetingbot.Key(v.id, 10*time.Minute, v.start), m)}
		if rng.IntN(2) == 0 {
			c.action = meetingbot.ActionSnooze5m
		}
		c.both = rng.IntN(4) == 0
		clicks = append(clicks, c)
		if rng.IntN(4) == 0 { // a double click
			d := c
			d.at, d.stamp, d.both = at.Add(time.Duration(1+rng.IntN(3))*time.Second), at.Add(time.Duration(1+rng.IntN(3))*time.Second), false
			clicks = append(clicks, d)
			st.doubles++
		}
	}

	c := clock.NewFake(t0)
	tl.now = c.Now
	sl := &slack{now: c.Now}
	tr := &trouble{rng: rand.New(rand.NewPCG(seed, 0x7b0b1e)), st: &st}
	if rng.IntN(3) == 0 {
		tr.unconfirmed, tr.lookupFail = 10, 30
	}
	path := filepath.Join(dir, "bot.db")
	subs := func(ctx context.Context, id string) (meetingbot.Subscription, bool, error) {
		return meetingbot.Subscription{ID: id, CalendarID: "cal"}, id == "sub", nil
	}
	boot := func(b *bot) error {
		if b.store != nil {
			b.store.Close() // a SIGKILL's end: the flock goes with the process
		}
		store, err := storage.Open(ctx, path)
		if err != nil {
			return err
		}
		p := &process{crashAt: -1}
		cs := crashStore{store, p}
		h, err := snooze.NewHandler(&tl, crashNotifier{sl, p, tr}, cs, snooze.Options{Clock: c, Logger: discard()})
		if err != nil {
			return err
		}
		e, err := timer.New(cs, map[string]timer.Handler{meetingbot.TimerKindSnooze: h}, timer.Options{Clock: c, Logger: discard(), Poll: 30 * time.Second})
		if err != nil {
			return err
		}
		*b = bot{store: store, p: p, engine: e, service: snooze.NewService(e, store, subs, c.Now, discard())}
		return nil
	}
	bots := []*bot{{}}
	if rng.IntN(2) == 0 {
		bots = append(bots, &bot{})
	}
	for _, b := range bots {
		if err := boot(b); err != nil {
			return st, err
		}
	}
	defer func() {
		for _, b := range bots {
			b.store.Close()
		}
	}()
	up := func(b *bot) bool { return b.downTil.IsZero() && !b.p.isDead() }

	end := t0.Add(horizon + 2*time.Hour)
	calm := t0.Add(horizon + 40*time.Minute) // from then on nothing crashes, so every timer settles
	for now := t0; now.Before(end); now = c.Now() {
		for _, b := range bots {
			if !b.downTil.IsZero() && !now.Before(b.downTil) {
				if err := boot(b); err != nil {
					return st, err
				}
			}
		}
		for i := 0; i < len(clicks); i++ {
			k := clicks[i]
			if k.at.After(now) {
				continue
			}
			var live []*bot
			for _, b := range bots {
				if up(b) {
					live = append(live, b)
				}
			}
			if len(live) == 0 {
				clicks[i].at = now.Add(time.Second) // Slack shows an error; the person clicks again
				continue
			}
			to := live[:1]
			if k.both && len(live) == 2 {
				to = live
				st.both++
			}
			for _, b := range to {
				if _, err := b.service.Click(ctx, k.user, k.action, k.value, k.stamp); err != nil {
					return st, fmt.Errorf("click at %v: %w", now, err)
				}
			}
			st.clicks++
			clicks = append(clicks[:i], clicks[i+1:]...)
			i--
		}
		next := now.Add(30 * time.Second)
		for _, k := range clicks {
			next = earlier(next, k.at)
		}
		for _, b := range bots {
			if !up(b) {
				if !b.downTil.IsZero() {
					next = earlier(next, b.downTil)
				}
				continue
			}
			if now.Before(calm) && rng.IntN(100) < 15 {
				b.p.mu.Lock()
				b.p.crashAt, b.p.after = b.p.calls+rng.IntN(10), rng.IntN(2) == 0
				b.p.mu.Unlock()
			}
			wake := b.engine.Tick(ctx)
			b.engine.Wait()
			if b.p.isDead() {
				st.crashes++
				b.downTil = now.Add(time.Second)
				if rng.IntN(3) == 0 {
					b.downTil = now.Add(secs(45 * time.Minute))
					st.downtimes++
				}
				next = earlier(next, b.downTil)
				continue
			}
			b.p.mu.Lock()
			b.p.crashAt = -1
			b.p.mu.Unlock()
			if !wake.IsZero() {
				next = earlier(next, later(wake, now.Add(time.Millisecond)))
			}
		}
		c.Set(later(next, now.Add(time.Millisecond)))
	}

	// The oracle.
	all, err := bots[0].store.TimerRange(ctx, t0.Add(-time.Hour), forever)
	if err != nil {
		return st, err
	}
	byKey := map[string]meetingbot.Timer{}
	for _, t := range all {
		byKey[t.Key] = t
	}
	delivered := map[string][]dm{}
	for _, d := range sl.dms {
		delivered[d.r.Key] = append(delivered[d.r.Key], d)
	}
	for key, ds := range delivered {
		if len(ds) > 1 {
			st.duplicates += len(ds) - 1
			return st, fmt.Errorf("%s delivered %d times", key, len(ds))
		}
		d := ds[0]
		t, ok := byKey[key]
		if !ok {
			return st, fmt.Errorf("%s delivered without a timer", key)
		}
		s, _ := meetingbot.ParseSnooze(t)
		v, there := tl.at(s.Meeting.ID, d.at)
		switch {
		case !there:
			return st, fmt.Errorf("%s delivered at %v: its meeting was not there then", key, d.at)
		case d.at.Before(t.FireAt):
			return st, fmt.Errorf("%s delivered at %v, before its instant %v", key, d.at, t.FireAt)
		case !d.at.Before(v.start.Add(30 * time.Minute)):
			return st, fmt.Errorf("%s delivered at %v, after its meeting's end %v", key, d.at, v.start.Add(30*time.Minute))
		case s.Mode == meetingbot.SnoozeAtStart && d.at.Before(v.start):
			return st, fmt.Errorf("%s (at start) delivered at %v, before the start %v", key, d.at, v.start)
		case !d.r.Meeting.Start.Equal(v.start):
			return st, fmt.Errorf("%s delivered at %v naming start %v; the meeting starts at %v", key, d.at, d.r.Meeting.Start, v.start)
		}
		st.delivered++
		if d.at.Equal(t.FireAt) {
			st.onTime++
		} else {
			st.late++
		}
	}
	for _, t := range all {
		st.added++
		switch {
		case t.State == meetingbot.TimerPending:
			return st, fmt.Errorf("timer %s still pending at the end (due %v)", t.Key, t.DueAt)
		case t.State == meetingbot.TimerMoved:
			st.moved++
			next, ok := byKey[t.Next]
			if !ok {
				return st, fmt.Errorf("timer %s moved to %s, which is not stored", t.Key, t.Next)
			}
			if next.CreatedAt.Before(t.DoneAt) {
				return st, fmt.Errorf("timer %s moved to %s, a timer that ended before: the wait is lost", t.Key, t.Next)
			}
		case t.Code == meetingbot.ReasonSent:
			if len(delivered[t.Key]) == 0 {
				return st, fmt.Errorf("timer %s recorded sent, not in Slack", t.Key)
			}
		case len(delivered[t.Key]) > 0:
			return st, fmt.Errorf("timer %s delivered, recorded %s (%s)", t.Key, t.Code, t.Reason)
		case t.Code == meetingbot.ReasonMeetingCancelled:
			st.cancelled++
			s, _ := meetingbot.ParseSnooze(t)
			if _, there := tl.at(s.Meeting.ID, t.DoneAt); there {
				return st, fmt.Errorf("timer %s ended for a cancelled meeting at %v, which was there", t.Key, t.DoneAt)
			}
		case t.Code == meetingbot.ReasonMeetingEnded:
			st.ended++
		default:
			return st, fmt.Errorf("timer %s ended %s (%s) without a DM", t.Key, t.Code, t.Reason)
		}
	}
	return st, nil
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
