package scheduler_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/scheduler"
	"github.com/meetingbot/meetingbot/storage/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// share is a replica's share of the subscriptions, set by the test.
type share struct {
	mu   sync.Mutex
	held map[string]bool
}

func (s *share) set(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = map[string]bool{}
	for _, id := range ids {
		s.held[id] = true
	}
}

func (s *share) get(_ context.Context, subs []meetingbot.Subscription) ([]meetingbot.Subscription, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var mine []meetingbot.Subscription
	for _, sub := range subs {
		if s.held[sub.ID] {
			mine = append(mine, sub)
		}
	}
	return mine, nil
}

// unrecorded is a ledger whose Record fails while down: the database went
// away after Slack accepted a message.
type unrecorded struct {
	*sqlite.Store
	mu   sync.Mutex
	down bool
}

func (l *unrecorded) Record(ctx context.Context, e meetingbot.Entry, now time.Time) error {
	l.mu.Lock()
	down := l.down
	l.mu.Unlock()
	if down {
		return errors.New("connection refused")
	}
	return l.Store.Record(ctx, e, now)
}

// A replica whose send could not be recorded, and whose subscription then
// went to another replica, hands its claim over: the new holder looks the
// message up in Slack and records it, instead of finding the key busy
// forever (the old replica, alive, no longer sweeps it).
func TestClaimOfASubscriptionHandedOverIsReleased(t *testing.T) {
	e := newEnv(t)
	e.fakeSlack.canLookup = true
	e.meeting(cal, "sync", at("09:00"))
	shareA, shareB := &share{}, &share{}
	shareA.set("alice")
	ledgerA := &unrecorded{Store: e.store, down: true}
	optsA := e.opts
	optsA.Share = shareA.get
	a, err := scheduler.New(e.subs, e.cal, e.fakeSlack, ledgerA, optsA)
	require.NoError(t, err)
	t.Cleanup(a.Stop)
	optsB := e.opts
	optsB.Share = shareB.get
	b := e.second(optsB)

	e.clock.Set(at("08:50"))
	require.NoError(t, a.Tick(context.Background()), "A's tick: sent, not recorded")
	require.Len(t, e.fakeSlack.Deliveries(), 1)
	ledgerA.mu.Lock()
	ledgerA.down = false
	ledgerA.mu.Unlock()

	shareA.set() // the subscription goes to B
	shareB.set("alice")
	for _, now := range []string{"08:50:30", "08:51", "08:51:30"} {
		e.clock.Set(at(now))
		require.NoError(t, b.Tick(context.Background()), "B's tick at %s", now)
		require.NoError(t, a.Tick(context.Background()), "A's tick at %s", now)
	}
	assert.Len(t, e.fakeSlack.Deliveries(), 1, "deliveries")
	rows := e.ledger()
	require.Len(t, rows, 1)
	assert.Equal(t, meetingbot.Sent, rows[0].Outcome, "the reminder A sent, once B holds alice")
	assert.Equal(t, meetingbot.ReasonInterruptedConfirmed, rows[0].Code, "found in Slack")
}

// A subscription that comes into this replica's share (another replica
// died, stopped or handed it over) is swept at once, not at its phase in
// the next interval: its reminders lose no more time than the handover.
func TestSubscriptionNewlySharedIsSweptAtOnce(t *testing.T) {
	e := newEnv(t, sub("alice"), sub("bob"))
	mine := &share{}
	mine.set("alice")
	e.opts.Share = mine.get
	e.opts.Interval = time.Minute
	e.clock.Set(at("08:00"))
	s, err := scheduler.New(e.subs, e.cal, e.fakeSlack, e.store, e.opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	eventually(t, func() bool { return e.cal.readsOf("alice@example.com") == 1 }, "the first round's sweep of alice")

	mine.set("alice", "bob")
	eventually(t, func() bool { return e.clock.Pending() > 0 }, "the wait for the next round")
	e.clock.Set(at("08:01")) // the next round; bob's phase in it is later
	eventually(t, func() bool { return e.cal.readsOf("bob@example.com") == 1 }, "a sweep of bob at the round that brings him")
}

// eventually waits, in real time, for cond.
func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// stalling is a ledger on which another replica, killed mid-send, holds
// a claim of alice's until free: Stalled names it once it may be free
// within the asked span, as postgres.Store does.
type stalling struct {
	*sqlite.Store
	free time.Time
}

func (l stalling) Stalled(_ context.Context, d time.Duration, now time.Time) ([]meetingbot.Entry, error) {
	if l.free.Sub(now) > d {
		return nil, nil
	}
	return []meetingbot.Entry{{Subscription: "alice", Key: "k", Owner: "dead-replica", LeaseUntil: l.free}}, nil
}

// A replica killed mid-send holds both the claim and the subscription's
// lease, so no live replica sweeps the subscription until that lease
// runs out and the next round takes it over, which may be after the
// meeting's start. A replica whose round sees the dead one's claim about
// to be free sweeps its subscription the moment it is, though it does not
// hold it: the reminder due at 08:59:50 goes out at 08:59:54, not at the
// round of 08:59:59 or later.
func TestStalledClaimOfASubscriptionHeldByNobodyAliveIsAskedForWhenFree(t *testing.T) {
	e := newEnv(t, sub("alice", 10*time.Second), sub("bob", 10*time.Second))
	e.opts.Interval = 10 * time.Second
	mine := &share{}
	mine.set("bob") // alice's lease is still the dead replica's
	e.opts.Share = mine.get
	e.wrap = func(st *sqlite.Store) scheduler.Ledger { return stalling{Store: st, free: at("08:59:54")} }
	e.clock.Set(at("08:59:49"))
	e.restart()
	e.meeting(cal, "sync", at("09:00")) // alice's calendar
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- e.sched.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	eventually(t, func() bool { return e.cal.readsOf("bob@example.com") == 1 }, "the first round's sweep of bob")
	require.Empty(t, e.fakeSlack.Deliveries(), "08:59:49: nothing due")

	e.clock.Set(at("08:59:55"))
	eventually(t, func() bool { return len(e.fakeSlack.Deliveries()) == 1 }, "alice's reminder, once the dead replica's claim is free")
	got := e.fakeSlack.Deliveries()[0]
	assert.Equal(t, "alice", got.Subscription.ID)
	assert.False(t, got.At.After(at("08:59:55")), "sent at %v", got.At)
}
