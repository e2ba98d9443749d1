package snooze_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify/action"
)

// The world of TestRandomSnoozesCrashesAndProcesses: a calendar whose
// meetings move, are cancelled and declined as the fake clock passes;
// Slack, shared by the processes; and the crashes of each process.

// version is one start of a meeting, in the calendar during [from, to).
// After the last version of a meeting it is gone: deleted, or declined.
type version struct {
	id       string
	start    time.Time
	from, to time.Time
	declined bool // gone at to because its calendar's owner declined it
}

func (v version) meeting() meetingbot.Meeting {
	return meetingbot.Meeting{ID: v.id, Title: "Meeting " + v.id, Start: v.start, End: v.end()}
}

func (v version) end() time.Time { return v.start.Add(30 * time.Minute) }

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

// last is the last version of id that began by t.
func (tl *timeline) last(id string, t time.Time) (version, bool) {
	var out version
	found := false
	for _, v := range tl.versions {
		if v.id == id && !v.from.After(t) {
			out, found = v, true
		}
	}
	return out, found
}

// reading is the calendar at t, as the mirror holds it.
func (tl *timeline) reading(t time.Time) []meetingbot.Meeting {
	var out []meetingbot.Meeting
	for _, v := range tl.versions {
		if !t.Before(v.from) && t.Before(v.to) {
			out = append(out, v.meeting())
		}
	}
	return out
}

func (tl *timeline) Meetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
	var out []meetingbot.Meeting
	for _, m := range tl.reading(tl.now()) {
		if m.Start.After(from) && !m.Start.After(to) {
			out = append(out, m)
		}
	}
	return out, nil
}

func (tl *timeline) Meeting(ctx context.Context, sub meetingbot.Subscription, id string) (meetingbot.Meeting, error) {
	now := tl.now()
	if v, ok := tl.at(id, now); ok {
		return v.meeting(), nil
	}
	if v, ok := tl.last(id, now); ok && v.declined {
		return meetingbot.Meeting{}, meetingbot.ErrDeclined
	}
	return meetingbot.Meeting{}, meetingbot.ErrGone
}

// newTimeline draws 1 to 4 meetings in the first hour, each moving
// (earlier or later, into the past too) up to three times, and half of
// those that change for good cancelled or declined.
func newTimeline(rng *rand.Rand, horizon time.Duration) *timeline {
	secs := func(d time.Duration) time.Duration {
		return time.Duration(rng.Int64N(int64(max(d, 0)/time.Second)+1)) * time.Second
	}
	tl := &timeline{}
	for i := range 1 + rng.IntN(4) {
		id := fmt.Sprintf("m%d", i)
		from, s := t0.Add(-time.Hour), t0.Add(2*time.Minute+secs(horizon))
		for change := 0; ; change++ {
			to := forever
			if change < 3 && rng.IntN(10) < 6 {
				to = from.Add(time.Second + secs(s.Add(5*time.Minute).Sub(from)))
			}
			v := version{id: id, start: s, from: from, to: to}
			gone := to != forever && rng.IntN(10) < 3
			v.declined = gone && rng.IntN(2) == 0
			tl.versions = append(tl.versions, v)
			if to == forever || gone {
				break
			}
			from, s = to, to.Add(-10*time.Minute+secs(40*time.Minute))
		}
	}
	return tl
}

var forever = t0.Add(100 * time.Hour)

// dm is one snooze DM Slack holds.
type dm struct {
	r     meetingbot.Reminder
	moved bool
	at    time.Time
}

// slack holds the DMs, shared by the processes.
type fakeSlack struct {
	mu  sync.Mutex
	now func() time.Time
	dms []dm
}

func (s *fakeSlack) post(r meetingbot.Reminder, moved bool) meetingbot.Receipt {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dms = append(s.dms, dm{r: r, moved: moved, at: s.now()})
	return meetingbot.Receipt{Channel: "D" + r.Subscription.Destination, TS: fmt.Sprint(len(s.dms))}
}

func (s *fakeSlack) find(r meetingbot.Reminder) (meetingbot.Receipt, bool) {
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
// do nothing; died is the instant it died.
type process struct {
	mu      sync.Mutex
	calls   int
	crashAt int // -1: never
	after   bool
	dead    bool
	now     func() time.Time
	died    time.Time
	due     int // timers its last pass found due
}

func (p *process) listed(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.due = n
}

// fired reports whether its last pass found timers due.
func (p *process) fired() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.due > 0
}

func (p *process) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return false
	}
	if p.calls == p.crashAt && !p.after {
		p.dead, p.died = true, p.now()
		return false
	}
	return true
}

func (p *process) leave() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.calls
	p.calls++
	if n == p.crashAt && p.after && !p.dead {
		p.dead, p.died = true, p.now()
	}
	return !p.dead
}

func (p *process) isDead() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dead
}

// clock is the process's clock for its store's leases and heartbeat
// (PostgreSQL): the case's, stopped where the process died, so that a
// heartbeat its dead store still beats renews nothing.
func (p *process) clock() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return p.died
	}
	return p.now()
}

// kill ends the process now, as an outage of the whole bot does.
func (p *process) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.dead {
		p.dead, p.died = true, p.now()
	}
}

func (p *process) arm(rng *rand.Rand) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.crashAt, p.after = p.calls+rng.IntN(10), rng.IntN(2) == 0
}

func (p *process) disarm() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.crashAt = -1
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

// trouble is what goes wrong with Slack beyond crashes, and when it went
// wrong for each key. Its notifier is called from several fires at once,
// so what it draws is behind mu.
type trouble struct {
	mu          sync.Mutex
	rng         *rand.Rand
	unconfirmed int // percent of posts whose answer is lost
	lookupFail  int // percent of lookups that fail
	st          *stats
	at          map[string][]time.Time // by key
}

func (t *trouble) roll(n int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rng.IntN(n)
}

func (t *trouble) met(key string, at time.Time, f func(*stats)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f(t.st)
	t.at[key] = append(t.at[key], at)
}

type crashNotifier struct {
	fakeSlack *fakeSlack
	p         *process
	t         *trouble
}

func (n crashNotifier) NotifySnooze(ctx context.Context, r meetingbot.Reminder, of meetingbot.Snooze, moved bool) (meetingbot.Receipt, error) {
	if !n.p.enter() {
		return meetingbot.Receipt{}, errCrashed
	}
	var rc meetingbot.Receipt
	var err error
	if n.t.roll(100) < n.t.unconfirmed {
		n.t.met(r.Key, n.fakeSlack.now(), func(st *stats) { st.unconfirmed++ })
		if n.t.roll(2) == 0 {
			n.fakeSlack.post(r, moved)
		}
		err = fmt.Errorf("slack: answer lost: %w", meetingbot.ErrUnconfirmed)
	} else {
		rc = n.fakeSlack.post(r, moved)
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
		n.t.met(r.Key, n.fakeSlack.now(), func(st *stats) { st.lookupsFailed++ })
		err = errors.New("slack: 503 service unavailable")
	} else {
		rc, ok = n.fakeSlack.find(r)
	}
	if !n.p.leave() {
		return meetingbot.Receipt{}, false, errCrashed
	}
	return rc, ok, err
}

// click is one click on a snooze button.
type click struct {
	at, stamp time.Time // when it reaches the bot; Slack's action_ts
	user      string
	action    string
	value     string
	start     time.Time // the start its button shows
	both      bool      // reaches both processes (Slack's retry to another replica)
}

// newClicks draws clicks on the snooze buttons of the meetings' reminders,
// some of them double.
func newClicks(rng *rand.Rand, tl *timeline, st *stats) []click {
	secs := func(d time.Duration) time.Duration {
		return time.Duration(rng.Int64N(int64(max(d, 0)/time.Second)+1)) * time.Second
	}
	users := []string{"U1", "U2", "U3"}
	var clicks []click
	var changing []version // versions that change: their snoozes must follow
	for _, v := range tl.versions {
		if v.to != forever {
			changing = append(changing, v)
		}
	}
	for range 2 + rng.IntN(8) {
		v := tl.versions[rng.IntN(len(tl.versions))]
		if len(changing) > 0 && rng.IntN(3) > 0 {
			v = changing[rng.IntN(len(changing))]
		}
		lo, hi := later(v.from, v.start.Add(-20*time.Minute), t0), earlier(v.to, v.start)
		if !hi.After(lo) {
			continue
		}
		at := lo.Add(secs(hi.Sub(lo) - time.Second))
		offset := []time.Duration{10 * time.Minute, time.Minute}[rng.IntN(2)] // the meeting's reminders
		c := click{at: at, stamp: at, user: users[rng.IntN(len(users))], action: action.SnoozeStart, start: v.start,
			value: action.SnoozeValue("sub", meetingbot.Key(v.id, offset, v.start), v.meeting())}
		if rng.IntN(2) == 0 {
			c.action = action.Snooze5m
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
	return clicks
}

// groupOfClick is the group of the timer a click stored, by its answer.
func groupOfClick(k click, answer string) string {
	v, _ := action.ParseSnooze(k.value)
	mode := meetingbot.SnoozeIn5m
	if k.action == action.SnoozeStart || strings.HasPrefix(answer, "It starts before then") {
		mode = meetingbot.SnoozeAtStart
	}
	return meetingbot.SnoozeGroup(k.user, v.Event, mode)
}
