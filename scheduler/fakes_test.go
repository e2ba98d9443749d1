package scheduler_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/scheduler"
	"github.com/meetingbot/meetingbot/storage/sqlite"
	"github.com/stretchr/testify/require"
)

// calendar is an in-memory meeting source.
type fakeCalendar struct {
	mu     sync.Mutex
	events map[string]map[string]meetingbot.Meeting // calendar ID -> event ID -> meeting
	fail   map[string]error                         // calendar ID -> error to return
	reads  int
	gets   int
	fresh  int            // reads by FreshMeetings, of a mirrored env
	readBy map[string]int // calendar ID -> reads
	// slowRead, if set, runs before the next read of meetings answers,
	// once: a read that waits (on the network, on the quota).
	slowRead func()
	// down holds, per calendar that cannot answer now (Down), its
	// meetings as last read: a mirror's reading, which Meetings answers
	// with a StaleReading.
	down map[string]stale
	// declined are the meetings their calendar's owner declined: no
	// longer listed, and ErrDeclined to Meeting, as package calendar
	// answers.
	declined map[string]bool // calendar ID + "/" + event ID
}

// Decline makes cal's owner decline the meeting id; Put brings it back,
// answered again.
func (c *fakeCalendar) Decline(cal, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.declined == nil {
		c.declined = map[string]bool{}
	}
	c.declined[cal+"/"+id] = true
	delete(c.events[cal], id)
}

// stale is a calendar's last reading, kept while it cannot answer.
type stale struct {
	at       time.Time
	why      meetingbot.StaleReason
	meetings map[string]meetingbot.Meeting
}

// Down makes cal unable to answer from now on: Meetings answers from its
// meetings as they are now (the mirror's last reading, read at at), with
// a StaleReading, whatever they become; Meeting fails. Up ends it.
func (c *fakeCalendar) Down(cal string, at time.Time, why meetingbot.StaleReason) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down == nil {
		c.down = map[string]stale{}
	}
	c.down[cal] = stale{at: at, why: why, meetings: maps.Clone(c.events[cal])}
}

// Up lets cal answer again.
func (c *fakeCalendar) Up(cal string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.down, cal)
}

func newCalendar() *fakeCalendar {
	return &fakeCalendar{events: map[string]map[string]meetingbot.Meeting{}, fail: map[string]error{}}
}

func (c *fakeCalendar) Put(cal string, m meetingbot.Meeting) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.events[cal] == nil {
		c.events[cal] = map[string]meetingbot.Meeting{}
	}
	if m.End.IsZero() {
		m.End = m.Start.Add(30 * time.Minute)
	}
	delete(c.declined, cal+"/"+m.ID)
	c.events[cal][m.ID] = m
}

func (c *fakeCalendar) readsOf(cal string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readBy[cal]
}

func (c *fakeCalendar) Cancel(cal, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.events[cal], id)
}

func (c *fakeCalendar) Fail(cal string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		delete(c.fail, cal)
	} else {
		c.fail[cal] = err
	}
}

// Meeting returns one meeting as the calendar has it now; a cancelled or
// unknown one is gone.
func (c *fakeCalendar) Meeting(ctx context.Context, sub meetingbot.Subscription, id string) (meetingbot.Meeting, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gets++
	if err := c.fail[sub.CalendarID]; err != nil {
		return meetingbot.Meeting{}, err
	}
	if _, ok := c.down[sub.CalendarID]; ok {
		return meetingbot.Meeting{}, fmt.Errorf("calendar %s: 503 backendError", sub.CalendarID)
	}
	m, ok := c.events[sub.CalendarID][id]
	switch {
	case !ok && c.declined[sub.CalendarID+"/"+id]:
		return meetingbot.Meeting{}, fmt.Errorf("event %s: %w", id, meetingbot.ErrDeclined)
	case !ok:
		return meetingbot.Meeting{}, fmt.Errorf("event %s: %w", id, meetingbot.ErrGone)
	}
	return m, nil
}

func (c *fakeCalendar) Meetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
	c.mu.Lock()
	slow := c.slowRead
	c.slowRead = nil
	c.mu.Unlock()
	if slow != nil {
		slow()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	if c.readBy == nil {
		c.readBy = map[string]int{}
	}
	c.readBy[sub.CalendarID]++
	if err := c.fail[sub.CalendarID]; err != nil {
		return nil, err
	}
	events, err := c.events[sub.CalendarID], error(nil)
	if d, ok := c.down[sub.CalendarID]; ok {
		events = d.meetings
		err = &meetingbot.StaleReading{CalendarID: sub.CalendarID, ReadAt: d.at, Why: d.why, Err: fmt.Errorf("calendar %s: 503 backendError", sub.CalendarID)}
	}
	var out []meetingbot.Meeting
	for _, m := range events {
		if m.Start.After(from) && !m.Start.After(to) {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out, err
}

// mirrored is the calendar as a FreshSource, a mirror's: FreshMeetings
// counts as a sync of the calendar (fresh) and answers as Meetings.
type fakeMirror struct{ *fakeCalendar }

func (m fakeMirror) FreshMeetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
	m.mu.Lock()
	m.fresh++
	m.mu.Unlock()
	return m.Meetings(ctx, sub, from, to)
}

// delivery is one reminder as the fake Slack received it.
type delivery struct {
	meetingbot.Reminder
	At     time.Time
	TS     string
	Digest int // how many reminders its message held, 1 if alone
}

// slack is an in-memory notifier that records deliveries.
type fakeSlack struct {
	mu        sync.Mutex
	now       func() time.Time
	got       []delivery
	fail      map[string][]error // subscription ID -> errors to return, in order
	canLookup bool
	seq       int
	// before, if set, runs at the start of each Notify, outside the lock:
	// a slow Slack, or another process acting while a send is in flight.
	before func(r meetingbot.Reminder)
	// sending, if set, runs at the start of each Notify and NotifyDigest
	// with the send's context, before before.
	sending func(ctx context.Context, r meetingbot.Reminder)
	// lookupFail, if set, answers Delivered before it looks; beforeLookup,
	// if set, runs at the start of each Delivered, outside the lock.
	lookupFail   []error
	beforeLookup func(r meetingbot.Reminder)
	// edits are the edits made, in order; editCalls counts every Edit,
	// failed ones too; editFail fails the next Edits, in order; beforeEdit,
	// if set, runs at the start of each Edit, outside the lock.
	edits      []edit
	editCalls  int
	editFail   []error
	beforeEdit func(f meetingbot.Follow)
}

// edit is one edit of a sent reminder as the fake Slack made it.
type edit struct {
	meetingbot.Follow
	At time.Time
}

func newSlack(now func() time.Time) *fakeSlack {
	return &fakeSlack{now: now, fail: map[string][]error{}, canLookup: true}
}

func (s *fakeSlack) FailNext(sub string, errs ...error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[sub] = append(s.fail[sub], errs...)
}

func (s *fakeSlack) Notify(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, error) {
	if s.sending != nil {
		s.sending(ctx, r)
	}
	if s.before != nil {
		s.before(r)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.fail[r.Subscription.ID]; len(q) > 0 {
		s.fail[r.Subscription.ID] = q[1:]
		return meetingbot.Receipt{}, q[0]
	}
	s.seq++
	d := delivery{Reminder: r, At: s.now(), TS: fmt.Sprintf("%d.000100", s.seq), Digest: 1}
	s.got = append(s.got, d)
	return meetingbot.Receipt{Channel: "C-" + r.Subscription.ID, TS: d.TS}, nil
}

// NotifyDigest records one message holding every reminder of rs.
func (s *fakeSlack) NotifyDigest(ctx context.Context, rs []meetingbot.Reminder) (meetingbot.Receipt, error) {
	if s.sending != nil {
		s.sending(ctx, rs[0])
	}
	if s.before != nil {
		s.before(rs[0])
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sub := rs[0].Subscription.ID
	if q := s.fail[sub]; len(q) > 0 {
		s.fail[sub] = q[1:]
		return meetingbot.Receipt{}, q[0]
	}
	s.seq++
	ts := fmt.Sprintf("%d.000100", s.seq)
	for _, r := range rs {
		s.got = append(s.got, delivery{Reminder: r, At: s.now(), TS: ts, Digest: len(rs)})
	}
	return meetingbot.Receipt{Channel: "C-" + sub, TS: ts}, nil
}

func (s *fakeSlack) Delivered(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, bool, error) {
	if s.beforeLookup != nil {
		s.beforeLookup(r)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.lookupFail) > 0 {
		err := s.lookupFail[0]
		s.lookupFail = s.lookupFail[1:]
		return meetingbot.Receipt{}, false, err
	}
	if !s.canLookup {
		return meetingbot.Receipt{}, false, meetingbot.ErrUnknown
	}
	for _, d := range s.got {
		if d.Key == r.Key && d.Subscription.ID == r.Subscription.ID {
			return meetingbot.Receipt{Channel: "C-" + r.Subscription.ID, TS: d.TS}, true, nil
		}
	}
	return meetingbot.Receipt{}, false, nil
}

// Edit edits a delivered message: it records the edit, unless a failure
// is queued.
func (s *fakeSlack) Edit(ctx context.Context, f meetingbot.Follow) error {
	if s.beforeEdit != nil {
		s.beforeEdit(f)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.editCalls++
	if len(s.editFail) > 0 {
		err := s.editFail[0]
		s.editFail = s.editFail[1:]
		return err
	}
	s.edits = append(s.edits, edit{Follow: f, At: s.now()})
	return nil
}

// Edits returns the edits made so far.
func (s *fakeSlack) Edits() []edit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]edit(nil), s.edits...)
}

func (s *fakeSlack) Deliveries() []delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]delivery(nil), s.got...)
}

// env is one bot on one database file, with a pinned clock and fakes.
type env struct {
	t         *testing.T
	clock     *clock.Fake
	cal       *fakeCalendar
	fakeSlack *fakeSlack
	path      string
	store     *sqlite.Store
	subs      []meetingbot.Subscription
	opts      scheduler.Options
	sched     *scheduler.Scheduler
	// wrap, if set, stands between the scheduler and each store restart
	// opens, to fail its calls.
	wrap func(*sqlite.Store) scheduler.Ledger
	// mirrored, if set before restart, makes the calendar a FreshSource.
	fakeMirror bool
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

var t0 = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

func at(hhmm string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05", "2026-11-30 "+hhmm)
	if err != nil {
		t, err = time.Parse("2006-01-02 15:04", "2026-11-30 "+hhmm)
	}
	if err != nil {
		panic(err)
	}
	return t
}

func sub(id string, offsets ...time.Duration) meetingbot.Subscription {
	if len(offsets) == 0 {
		offsets = []time.Duration{10 * time.Minute}
	}
	return meetingbot.Subscription{ID: id, CalendarID: id + "@example.com", Offsets: offsets}
}

func newEnv(t *testing.T, subs ...meetingbot.Subscription) *env {
	t.Helper()
	if len(subs) == 0 {
		subs = []meetingbot.Subscription{sub("alice")}
	}
	c := clock.NewFake(t0)
	e := &env{t: t, clock: c, cal: newCalendar(), fakeSlack: newSlack(c.Now), path: filepath.Join(t.TempDir(), "bot.db"), subs: subs}
	e.opts = scheduler.Options{Clock: c, Logger: discardLogger()}
	e.restart()
	t.Cleanup(func() {
		e.sched.Stop()
		e.store.Close()
	})
	return e
}

// restart drops the scheduler, its timers and all, and reopens the store,
// as a new process would.
func (e *env) restart() {
	e.t.Helper()
	if e.sched != nil {
		e.sched.Stop()
	}
	if e.store != nil {
		e.store.Close()
	}
	st, err := sqlite.Open(context.Background(), e.path)
	if err != nil {
		require.NoError(e.t, err, "sqlite.Open")
	}
	e.store = st
	var ledger scheduler.Ledger = st
	if e.wrap != nil {
		ledger = e.wrap(st)
	}
	var source scheduler.Source = e.cal
	if e.fakeMirror {
		source = fakeMirror{e.cal}
	}
	s, err := scheduler.New(e.subs, source, e.fakeSlack, ledger, e.opts)
	require.NoError(e.t, err, "scheduler.New")
	e.sched = s
}

// tickAt sets the clock to hhmm and ticks.
func (e *env) tickAt(t time.Time) {
	e.t.Helper()
	e.clock.Set(t)
	require.NoError(e.t, e.sched.Tick(context.Background()), "Tick(%v)", t)
}

// tickEvery ticks every step from 'from' to 'to' inclusive.
func (e *env) tickEvery(from, to time.Time, step time.Duration) {
	e.t.Helper()
	for t := from; !t.After(to); t = t.Add(step) {
		e.tickAt(t)
	}
}

func (e *env) meeting(cal, id string, start time.Time) {
	e.cal.Put(cal, meetingbot.Meeting{ID: id, Title: id, Start: start})
}

func (e *env) ledger() []meetingbot.Entry {
	e.t.Helper()
	rows, err := e.store.Range(context.Background(), "", time.Time{}, t0.Add(1000*time.Hour))
	require.NoError(e.t, err, "Range")
	return rows
}
