package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TimerStore is what both backends provide of durable timers
// (meetingbot.Timer).
type TimerStore interface {
	Owner() string
	Close() error

	AddTimer(ctx context.Context, t meetingbot.Timer, now time.Time) (meetingbot.Timer, bool, error)
	NextTimers(ctx context.Context, now time.Time) ([]meetingbot.Timer, time.Time, int, error)
	TakeTimer(ctx context.Context, key string, now time.Time, lease time.Duration) (meetingbot.Timer, bool, error)
	FinishTimer(ctx context.Context, t meetingbot.Timer, now time.Time) error
	MoveTimer(ctx context.Context, old, next meetingbot.Timer, now time.Time) error
	RekeyTimer(ctx context.Context, key string, next meetingbot.Timer, reason string, now time.Time) (bool, error)
	RetryTimer(ctx context.Context, t meetingbot.Timer, at time.Time, reason string) error
	CancelTimer(ctx context.Context, key, subject string, now time.Time) (meetingbot.Timer, bool, error)
	Timer(ctx context.Context, key string) (meetingbot.Timer, bool, error)
	PendingTimers(ctx context.Context, subject string) ([]meetingbot.Timer, error)
	TimerRange(ctx context.Context, from, to time.Time) ([]meetingbot.Timer, error)
	PruneTimers(ctx context.Context, before time.Time) (int64, error)
}

// TimerOpener opens a TimerStore on one database, as another process
// would, and closes it when the test ends (Close may also be called by
// the test).
type TimerOpener func(t *testing.T) TimerStore

// RunTimers runs the contract of durable timers. fresh makes an empty
// database for one test and returns its opener; every call of the opener
// is one more process on that database. The tests run in parallel, each
// on its own database.
func RunTimers(t *testing.T, fresh func(t *testing.T) TimerOpener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open TimerOpener)
	}{
		{"AddTwiceMakesOneTimer", testAddTimerTwice},
		{"ProcessesAddingOneWaitAtOnceMakeOne", testAddTimerRace},
		{"TakeFinishLifecycle", testTakeTimer},
		{"OneTakeWinsAmongManyProcesses", testTakeTimerRace},
		{"ClosedHoldersTimerIsTakenAtOnce", testTimerOfClosedHolder},
		{"RetryWaitsUntilItsInstant", testRetryTimer},
		{"MoveEndsOneAndStoresTheNext", testMoveTimer},
		{"RekeyMovesAWaitBeforeItsInstant", testRekeyTimer},
		{"CancelOnlyByItsSubject", testCancelTimer},
		{"TimersSurviveRestartAndPrune", testTimersSurviveRestart},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, fresh(t))
		})
	}
}

// snooze is user's snooze of reminder k, firing at fire.
func snooze(user, k string, mode meetingbot.SnoozeMode, fire time.Time) meetingbot.Timer {
	start := t0.Add(10 * time.Minute)
	return meetingbot.Snooze{User: user, Mode: mode, Reminder: k, Subscription: "alice", Calendar: "alice@example.com",
		Meeting: meetingbot.Meeting{ID: "ev-" + k, Title: "Standup", Start: start, End: start.Add(30 * time.Minute)}}.Timer(fire)
}

func add(t *testing.T, s TimerStore, tm meetingbot.Timer, now time.Time) (meetingbot.Timer, bool) {
	t.Helper()
	got, added, err := s.AddTimer(t.Context(), tm, now)
	require.NoError(t, err, "AddTimer(%s)", tm.Key)
	return got, added
}

func take(t *testing.T, s TimerStore, key string, now time.Time) bool {
	t.Helper()
	_, ok, err := s.TakeTimer(t.Context(), key, now, 2*time.Minute)
	require.NoError(t, err, "TakeTimer(%s)", key)
	return ok
}

func testAddTimerTwice(t *testing.T, open TimerOpener) {
	ctx := t.Context()
	a, b := open(t), open(t)
	at := t0.Add(5 * time.Minute)
	first := snooze("U1", "k1", meetingbot.SnoozeIn5m, at)
	got, added := add(t, a, first, t0)
	require.True(t, added, "first add")
	assert.Equal(t, first.Key, got.Key)
	assert.Equal(t, meetingbot.TimerPending, got.State)
	assert.Equal(t, at, got.FireAt)
	assert.Equal(t, at, got.DueAt, "due at its instant")
	assert.Equal(t, t0, got.CreatedAt)
	assert.Equal(t, t0.Add(40*time.Minute), got.Until, "bound by the meeting's end")
	s, ok := meetingbot.ParseSnooze(got)
	require.True(t, ok, "payload %s", got.Payload)
	assert.Equal(t, "Standup", s.Meeting.Title)

	again, added := add(t, b, first, t0.Add(time.Second))
	assert.False(t, added, "the same key again, from another process")
	assert.Equal(t, first.Key, again.Key)
	assert.Equal(t, t0, again.CreatedAt, "the first one")

	// A second click on "In 5 min" two seconds later: another instant,
	// the same group, the first timer.
	later := snooze("U1", "k1", meetingbot.SnoozeIn5m, at.Add(2*time.Second))
	got, added = add(t, b, later, t0.Add(2*time.Second))
	assert.False(t, added, "another key of a pending group")
	assert.Equal(t, first.Key, got.Key, "the group's pending timer")

	// Another mode, or another person, is another wait.
	_, added = add(t, a, snooze("U1", "k1", meetingbot.SnoozeAtStart, t0.Add(10*time.Minute)), t0)
	assert.True(t, added, "at start beside in 5 min")
	_, added = add(t, a, snooze("U2", "k1", meetingbot.SnoozeIn5m, at), t0)
	assert.True(t, added, "another person")

	// Cancelled, the group is free and the same key comes back.
	_, ok, err := a.CancelTimer(ctx, first.Key, "U1", t0.Add(time.Minute))
	require.NoError(t, err)
	require.True(t, ok)
	got, added = add(t, b, first, t0.Add(2*time.Minute))
	assert.True(t, added, "a cancelled timer added again")
	assert.Equal(t, meetingbot.TimerPending, got.State)
	assert.Empty(t, got.Code)
	assert.Equal(t, t0.Add(2*time.Minute), got.CreatedAt)

	_, _, err = a.AddTimer(ctx, meetingbot.Timer{Key: "x", Kind: meetingbot.TimerKindSnooze}, t0)
	assert.ErrorIs(t, err, meetingbot.ErrInvalid, "a timer without an instant")
}

// Slack's retry of one click reaching several replicas at once, and a
// double click, make one timer.
func testAddTimerRace(t *testing.T, open TimerOpener) {
	stores := make([]TimerStore, 6)
	for i := range stores {
		stores[i] = open(t)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	added := 0
	for i, s := range stores {
		wg.Go(func() {
			// Each a click a second apart: different keys, one group.
			tm := snooze("U1", "k1", meetingbot.SnoozeIn5m, t0.Add(5*time.Minute+time.Duration(i)*time.Second))
			_, ok, err := s.AddTimer(t.Context(), tm, t0)
			assert.NoError(t, err)
			mu.Lock()
			defer mu.Unlock()
			if ok {
				added++
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 1, added, "timers added by six processes at once")
	pending, err := stores[0].PendingTimers(t.Context(), "U1")
	require.NoError(t, err)
	assert.Len(t, pending, 1, "pending timers")
}

func testTakeTimer(t *testing.T, open TimerOpener) {
	ctx := t.Context()
	a, b := open(t), open(t)
	fire := t0.Add(5 * time.Minute)
	tm, _ := add(t, a, snooze("U1", "k1", meetingbot.SnoozeIn5m, fire), t0)

	due, next, _, err := b.NextTimers(ctx, t0)
	require.NoError(t, err)
	assert.Empty(t, due, "due before its instant")
	assert.Equal(t, fire, next, "next wake")
	assert.False(t, take(t, b, tm.Key, fire.Add(-time.Millisecond)), "taken before its instant")

	due, next, _, err = b.NextTimers(ctx, fire)
	require.NoError(t, err)
	require.Len(t, due, 1, "due at its instant")
	assert.Equal(t, tm.Key, due[0].Key)
	assert.True(t, next.IsZero(), "no other timer, got %v", next)

	require.True(t, take(t, a, tm.Key, fire), "first take")
	assert.False(t, take(t, b, tm.Key, fire.Add(time.Second)), "taken while another live process holds it")
	assert.False(t, take(t, b, tm.Key, fire.Add(time.Hour)), "taken from a live holder past its lease")
	due, _, _, err = b.NextTimers(ctx, fire.Add(time.Second))
	require.NoError(t, err)
	assert.Empty(t, due, "due while another live process holds it")
	got, ok, err := a.Timer(ctx, tm.Key)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, a.Owner(), got.Holder)
	assert.Equal(t, 1, got.Attempts)

	done := tm
	done.State, done.Code = meetingbot.TimerDone, meetingbot.ReasonSent
	assert.ErrorIs(t, b.FinishTimer(ctx, done, fire), meetingbot.ErrTimerLost, "finished by another process")
	require.NoError(t, a.FinishTimer(ctx, done, fire.Add(2*time.Second)))
	assert.ErrorIs(t, a.FinishTimer(ctx, done, fire), meetingbot.ErrTimerLost, "finished twice")
	assert.False(t, take(t, b, tm.Key, fire.Add(time.Minute)), "a timer that ended")
	got, _, err = b.Timer(ctx, tm.Key)
	require.NoError(t, err)
	assert.Equal(t, meetingbot.TimerDone, got.State)
	assert.Equal(t, meetingbot.ReasonSent, got.Code)
	assert.Equal(t, fire.Add(2*time.Second), got.DoneAt)
	assert.Empty(t, got.Holder, "an ended timer has no holder")
	due, next, _, err = b.NextTimers(ctx, fire.Add(time.Hour))
	require.NoError(t, err)
	assert.Empty(t, due, "an ended timer is not due")
	assert.True(t, next.IsZero())
}

func testTakeTimerRace(t *testing.T, open TimerOpener) {
	first := open(t)
	tm, _ := add(t, first, snooze("U1", "k1", meetingbot.SnoozeAtStart, t0), t0.Add(-time.Minute))
	stores := []TimerStore{first}
	for range 5 {
		stores = append(stores, open(t))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var won []string
	for _, s := range stores {
		wg.Go(func() {
			_, ok, err := s.TakeTimer(t.Context(), tm.Key, t0, 2*time.Minute)
			assert.NoError(t, err)
			if ok {
				mu.Lock()
				won = append(won, s.Owner())
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	assert.Len(t, won, 1, "processes that took one timer at once")
}

// A process that closed (a clean exit) holds nothing: its timer is
// another's to take at once, as its claims are.
func testTimerOfClosedHolder(t *testing.T, open TimerOpener) {
	a, b := open(t), open(t)
	tm, _ := add(t, a, snooze("U1", "k1", meetingbot.SnoozeAtStart, t0), t0.Add(-time.Minute))
	require.True(t, take(t, a, tm.Key, t0))
	require.NoError(t, a.Close())
	assert.True(t, take(t, b, tm.Key, t0.Add(time.Second)), "taken from a holder that closed")
}

func testRetryTimer(t *testing.T, open TimerOpener) {
	ctx := t.Context()
	a, b := open(t), open(t)
	tm, _ := add(t, a, snooze("U1", "k1", meetingbot.SnoozeAtStart, t0), t0.Add(-time.Minute))
	require.True(t, take(t, a, tm.Key, t0))
	assert.ErrorIs(t, b.RetryTimer(ctx, tm, t0.Add(30*time.Second), "503"), meetingbot.ErrTimerLost, "retried by another process")
	require.NoError(t, a.RetryTimer(ctx, tm, t0.Add(30*time.Second), "Slack answered 503"))
	due, next, _, err := b.NextTimers(ctx, t0.Add(time.Second))
	require.NoError(t, err)
	assert.Empty(t, due, "due before its retry")
	assert.Equal(t, t0.Add(30*time.Second), next)
	assert.False(t, take(t, b, tm.Key, t0.Add(29*time.Second)), "taken before its retry")
	require.True(t, take(t, b, tm.Key, t0.Add(30*time.Second)), "taken at its retry")
	got, _, err := b.Timer(ctx, tm.Key)
	require.NoError(t, err)
	assert.Equal(t, t0, got.FireAt, "the instant stays")
	assert.Equal(t, "Slack answered 503", got.Reason)
	assert.Equal(t, 2, got.Attempts)
}

func testMoveTimer(t *testing.T, open TimerOpener) {
	ctx := t.Context()
	a, b := open(t), open(t)
	old, _ := add(t, a, snooze("U1", "k1", meetingbot.SnoozeAtStart, t0), t0.Add(-time.Minute))
	next := snooze("U1", "k1", meetingbot.SnoozeAtStart, t0.Add(time.Hour))
	require.NotEqual(t, old.Key, next.Key, "a moved start is another key")
	assert.ErrorIs(t, a.MoveTimer(ctx, old, next, t0), meetingbot.ErrTimerLost, "moved without holding it")
	require.True(t, take(t, a, old.Key, t0))
	old.Reason = "the meeting moved to 10:00"
	assert.ErrorIs(t, b.MoveTimer(ctx, old, next, t0), meetingbot.ErrTimerLost, "moved by another process")
	require.NoError(t, a.MoveTimer(ctx, old, next, t0.Add(time.Second)))

	got, _, err := b.Timer(ctx, old.Key)
	require.NoError(t, err)
	assert.Equal(t, meetingbot.TimerMoved, got.State)
	assert.Equal(t, next.Key, got.Next)
	assert.Equal(t, meetingbot.ReasonMeetingMoved, got.Code)
	assert.Equal(t, "the meeting moved to 10:00", got.Reason)
	pending, err := b.PendingTimers(ctx, "U1")
	require.NoError(t, err)
	require.Len(t, pending, 1)
	assert.Equal(t, next.Key, pending[0].Key, "the wait goes on under the new key")
	assert.Equal(t, t0.Add(time.Hour), pending[0].FireAt)
	_, added := add(t, b, snooze("U1", "k1", meetingbot.SnoozeAtStart, t0), t0.Add(2*time.Second))
	assert.False(t, added, "clicking at start again while the moved one is pending")

	// The meeting moves back: the wait goes on under its first key again.
	require.True(t, take(t, b, next.Key, t0.Add(time.Hour)))
	require.NoError(t, b.MoveTimer(ctx, next, snooze("U1", "k1", meetingbot.SnoozeAtStart, t0), t0.Add(time.Hour)))
	back, _, err := a.Timer(ctx, old.Key)
	require.NoError(t, err)
	assert.Equal(t, meetingbot.TimerPending, back.State, "moved back to its first start")
	assert.Equal(t, t0.Add(time.Hour), back.CreatedAt, "stored anew")
	assert.Empty(t, back.Holder)
	assert.Empty(t, back.Next)
}

// A meeting seen moving before its snooze's instant: the pending wait is
// re-keyed to the new start by any process, and only while nobody could
// be firing it.
func testRekeyTimer(t *testing.T, open TimerOpener) {
	ctx := t.Context()
	a, b := open(t), open(t)
	old, _ := add(t, a, snooze("U1", "k1", meetingbot.SnoozeAtStart, t0.Add(10*time.Minute)), t0.Add(-time.Minute))
	earlier := snooze("U1", "k1", meetingbot.SnoozeAtStart, t0.Add(5*time.Minute))
	moved, err := b.RekeyTimer(ctx, old.Key, earlier, "the meeting moved to 08:05", t0)
	require.NoError(t, err)
	require.True(t, moved, "re-keyed by another process before its instant")
	got, _, err := a.Timer(ctx, old.Key)
	require.NoError(t, err)
	assert.Equal(t, meetingbot.TimerMoved, got.State)
	assert.Equal(t, meetingbot.ReasonMeetingMoved, got.Code)
	assert.Equal(t, earlier.Key, got.Next)
	assert.Equal(t, "the meeting moved to 08:05", got.Reason)
	assert.Equal(t, t0, got.DoneAt)
	pending, err := a.PendingTimers(ctx, "U1")
	require.NoError(t, err)
	require.Len(t, pending, 1, "pending after the re-key")
	assert.Equal(t, earlier.Key, pending[0].Key)
	assert.Equal(t, t0.Add(5*time.Minute), pending[0].FireAt, "the new start")
	assert.Equal(t, t0.Add(5*time.Minute), pending[0].DueAt)
	_, next, _, err := a.NextTimers(ctx, t0)
	require.NoError(t, err)
	assert.Equal(t, t0.Add(5*time.Minute), next, "the next wake")

	moved, err = a.RekeyTimer(ctx, old.Key, earlier, "again", t0)
	require.NoError(t, err)
	assert.False(t, moved, "re-keyed when no longer pending")

	// Moved back to its first start: the first key waits again.
	moved, err = a.RekeyTimer(ctx, earlier.Key, snooze("U1", "k1", meetingbot.SnoozeAtStart, t0.Add(10*time.Minute)), "moved back", t0.Add(time.Second))
	require.NoError(t, err)
	require.True(t, moved, "moved back")
	back, _, err := b.Timer(ctx, old.Key)
	require.NoError(t, err)
	assert.Equal(t, meetingbot.TimerPending, back.State, "the first key after moving back")
	assert.Empty(t, back.Next)

	// Due (its instant passed, or a retry's), or held: its fire checks
	// the meeting instead.
	due, _ := add(t, a, snooze("U2", "k2", meetingbot.SnoozeAtStart, t0), t0.Add(-time.Minute))
	moved, err = b.RekeyTimer(ctx, due.Key, snooze("U2", "k2", meetingbot.SnoozeAtStart, t0.Add(time.Hour)), "moved", t0)
	require.NoError(t, err)
	assert.False(t, moved, "re-keyed at its instant")
	require.True(t, take(t, a, due.Key, t0))
	require.NoError(t, a.RetryTimer(ctx, due, t0.Add(30*time.Second), "Slack answered 503"))
	moved, err = b.RekeyTimer(ctx, due.Key, snooze("U2", "k2", meetingbot.SnoozeAtStart, t0.Add(time.Hour)), "moved", t0.Add(time.Second))
	require.NoError(t, err)
	assert.False(t, moved, "re-keyed while waiting for a retry after its instant")

	_, err = a.RekeyTimer(ctx, old.Key, old, "", t0)
	assert.ErrorIs(t, err, meetingbot.ErrInvalid, "re-keyed to its own key")
}

func testCancelTimer(t *testing.T, open TimerOpener) {
	ctx := t.Context()
	a, b := open(t), open(t)
	tm, _ := add(t, a, snooze("U1", "k1", meetingbot.SnoozeAtStart, t0), t0.Add(-time.Minute))
	_, ok, err := b.CancelTimer(ctx, tm.Key, "U2", t0)
	require.NoError(t, err)
	assert.False(t, ok, "cancelled by another person")
	got, ok, err := b.CancelTimer(ctx, tm.Key, "U1", t0.Add(-30*time.Second))
	require.NoError(t, err)
	require.True(t, ok, "cancelled by its person")
	assert.Equal(t, meetingbot.TimerCancelled, got.State)
	assert.Equal(t, meetingbot.ReasonCancelledByUser, got.Code)
	_, ok, err = b.CancelTimer(ctx, tm.Key, "U1", t0)
	require.NoError(t, err)
	assert.False(t, ok, "cancelled twice")
	assert.False(t, take(t, a, tm.Key, t0), "a cancelled timer is taken")
	pending, err := a.PendingTimers(ctx, "")
	require.NoError(t, err)
	assert.Empty(t, pending)

	// Cancelled while being fired: the holder still says what it did.
	other, _ := add(t, a, snooze("U1", "k2", meetingbot.SnoozeAtStart, t0), t0.Add(-time.Minute))
	require.True(t, take(t, a, other.Key, t0))
	_, ok, err = b.CancelTimer(ctx, other.Key, "U1", t0)
	require.NoError(t, err)
	require.True(t, ok)
	other.State, other.Code = meetingbot.TimerDone, meetingbot.ReasonSent
	require.NoError(t, a.FinishTimer(ctx, other, t0.Add(time.Second)), "finished after a cancel in flight")
	got, _, err = b.Timer(ctx, other.Key)
	require.NoError(t, err)
	assert.Equal(t, meetingbot.TimerDone, got.State)
}

func testTimersSurviveRestart(t *testing.T, open TimerOpener) {
	ctx := t.Context()
	a := open(t)
	var keys []string
	for i := range 4 {
		tm, _ := add(t, a, snooze(fmt.Sprintf("U%d", i%2), fmt.Sprintf("k%d", i), meetingbot.SnoozeAtStart, t0.Add(time.Duration(i)*time.Minute)), t0.Add(-time.Hour))
		keys = append(keys, tm.Key)
	}
	require.True(t, take(t, a, keys[0], t0))
	done, _, _ := a.Timer(ctx, keys[0])
	done.State, done.Code = meetingbot.TimerDone, meetingbot.ReasonSent
	require.NoError(t, a.FinishTimer(ctx, done, t0))
	require.NoError(t, a.Close())

	b := open(t)
	pending, err := b.PendingTimers(ctx, "U1")
	require.NoError(t, err)
	require.Len(t, pending, 2, "U1's pending timers after a restart")
	assert.Equal(t, keys[1], pending[0].Key, "by instant")
	assert.Equal(t, keys[3], pending[1].Key)
	var s meetingbot.Snooze
	require.NoError(t, json.Unmarshal(pending[0].Payload, &s))
	assert.Equal(t, "U1", s.User)
	due, next, count, err := b.NextTimers(ctx, t0.Add(90*time.Second))
	require.NoError(t, err)
	assert.Equal(t, 3, count, "timers pending after a restart, one having ended")
	require.Len(t, due, 1, "due after a restart")
	assert.Equal(t, keys[1], due[0].Key)
	assert.Equal(t, t0.Add(2*time.Minute), next)

	all, err := b.TimerRange(ctx, t0, t0.Add(3*time.Minute))
	require.NoError(t, err)
	require.Len(t, all, 3, "timers firing in [t0, t0+3m)")
	assert.Equal(t, meetingbot.TimerDone, all[0].State)

	n, err := b.PruneTimers(ctx, t0.Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "ended timers pruned; pending ones kept")
	_, ok, err := b.Timer(ctx, keys[0])
	require.NoError(t, err)
	assert.False(t, ok, "pruned")
}

// RunSnoozeGroupMigration checks migration 018 (one pending snooze per
// person, meeting and mode): s holds no timer and is at the latest
// schema; rerun closes it, applies migration 018 again as to a database
// made before it, and returns the store opened after.
func RunSnoozeGroupMigration(t *testing.T, s TimerStore, rerun func() TimerStore) {
	ctx := t.Context()
	start := t0.Add(10 * time.Minute)
	m := meetingbot.Meeting{ID: "ev1", Title: "Standup", Start: start, End: start.Add(30 * time.Minute)}
	// As a bot before 018 stored them: grouped by reminder.
	before := func(reminder string, mode meetingbot.SnoozeMode, fire time.Time) meetingbot.Timer {
		tm := meetingbot.Snooze{User: "U1", Mode: mode, Reminder: reminder, Subscription: "alice", Calendar: "alice@example.com", Meeting: m}.Timer(fire)
		tm.Group = "snooze:U1:" + reminder + ":" + string(mode)
		return tm
	}
	tenMin, oneMin := meetingbot.Key("ev1", 10*time.Minute, start), meetingbot.Key("ev1", time.Minute, start)
	timers := []meetingbot.Timer{
		before(tenMin, meetingbot.SnoozeAtStart, start),
		before(oneMin, meetingbot.SnoozeAtStart, start), // the double a bot before 018 made
		before(tenMin, meetingbot.SnoozeIn5m, t0.Add(5*time.Minute)),
	}
	for _, tm := range timers {
		_, added := add(t, s, tm, t0)
		require.True(t, added, "a timer of group %s", tm.Group)
	}
	first := timers[0].Key
	if timers[1].Key < first {
		first = timers[1].Key
	}
	s = rerun()

	want := map[string]string{
		first:         meetingbot.SnoozeGroup("U1", "ev1", meetingbot.SnoozeAtStart),
		timers[2].Key: meetingbot.SnoozeGroup("U1", "ev1", meetingbot.SnoozeIn5m),
	}
	for _, tm := range timers[:2] {
		if tm.Key != first {
			want[tm.Key] = tm.Group // keeps its group, and fires
		}
	}
	for key, group := range want {
		got, ok, err := s.Timer(ctx, key)
		require.NoError(t, err)
		require.True(t, ok, "timer %s after migration 018", key)
		assert.Equal(t, group, got.Group, "group of %s after migration 018", key)
		assert.Equal(t, meetingbot.TimerPending, got.State, "state of %s after migration 018", key)
	}
	click := meetingbot.Snooze{User: "U1", Mode: meetingbot.SnoozeAtStart, Reminder: meetingbot.Key("ev1", 30*time.Minute, start),
		Subscription: "alice", Calendar: "alice@example.com", Meeting: m}.Timer(start)
	got, added := add(t, s, click, t0.Add(time.Minute))
	assert.False(t, added, "a click on the meeting's third reminder after migration 018")
	assert.Equal(t, first, got.Key, "the timer the click finds")
}
