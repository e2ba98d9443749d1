package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/scheduler"
	"github.com/meetingbot/meetingbot/storage/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// second opens another process on e's database file, with its own
// scheduler over the same calendar and Slack.
func (e *env) second(opts scheduler.Options) *scheduler.Scheduler {
	e.t.Helper()
	st, err := sqlite.Open(context.Background(), e.path)
	require.NoError(e.t, err)
	e.t.Cleanup(func() { st.Close() })
	s, err := scheduler.New(e.subs, e.cal, e.fakeSlack, st, opts)
	require.NoError(e.t, err)
	return s
}

func countKeys(ds []delivery) map[string]int {
	keys := map[string]int{}
	for _, d := range ds {
		keys[d.Subscription.ID+"|"+d.Key]++
	}
	return keys
}

// A live process's claim is never taken over, however long its tick has
// run: process A ticks at 08:50 with three due reminders whose sends take
// 45 s each; during the third, process B ticks at 08:52:15 on the same file.
func TestLiveClaimNotTakenOverMidSend(t *testing.T) {
	e := newEnv(t)
	for i := range 3 {
		e.meeting(cal, fmt.Sprintf("m%d", i), at("09:00"))
	}
	b := e.second(e.opts)
	sends := 0
	e.fakeSlack.before = func(r meetingbot.Reminder) {
		sends++
		if sends == 3 {
			e.clock.Set(at("08:52:15"))
			require.NoError(t, b.Tick(context.Background()), "B's tick")
		}
		e.clock.Set(e.clock.Now().Add(45 * time.Second)) // a slow Slack
	}
	e.tickAt(at("08:50"))
	e.fakeSlack.before = nil

	for k, n := range countKeys(e.fakeSlack.Deliveries()) {
		assert.Equal(t, 1, n, "deliveries of %s", k)
	}
	assert.Len(t, e.fakeSlack.Deliveries(), 3)
	for _, row := range e.ledger() {
		assert.Equal(t, meetingbot.Sent, row.Outcome, "%s", row.Key)
	}
}

// A claim keeps other processes off its key for as long as its owner
// lives, even past its lease; once the owner is gone it is taken over at
// once, and the new owner looks in Slack before sending.
func TestClaimOfLiveOwnerPastLeaseIsBusy(t *testing.T) {
	e := newEnv(t)
	e.meeting(cal, "sync", at("09:00"))
	b := e.second(e.opts)

	// A stalls after its claim: its Slack call hangs until released.
	release := make(chan struct{})
	entered := make(chan struct{})
	e.fakeSlack.before = func(meetingbot.Reminder) {
		close(entered)
		<-release
	}
	done := make(chan error)
	e.clock.Set(at("08:50"))
	go func() { done <- e.sched.Tick(context.Background()) }()
	<-entered
	e.fakeSlack.before = nil
	e.clock.Set(at("08:55")) // far past A's lease
	require.NoError(t, b.Tick(context.Background()))
	assert.Empty(t, e.fakeSlack.Deliveries(), "B sent while A, alive, held the claim")
	close(release)
	require.NoError(t, <-done)
	assert.Len(t, e.fakeSlack.Deliveries(), 1)
}

// A send that ended ambiguously (Slack may hold the message) keeps the
// "look in Slack first" state until a lookup answers: a lookup that fails
// for a while never turns into a second post.
func TestUnconfirmedSendLooksBeforeResending(t *testing.T) {
	for _, tt := range []struct {
		name     string
		lookups  []error
		accepted bool // Slack stored the ambiguous post
		want     int
	}{
		{"stored, lookups fail then answer", []error{errors.New("slack: 503"), errors.New("slack: timeout")}, true, 1},
		{"not stored, lookups fail then answer", []error{errors.New("slack: 503")}, false, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.meeting(cal, "sync", at("09:00"))
			e.tickAt(at("08:45"))
			ambiguous := fmt.Errorf("slack: 503 after posting: %w", meetingbot.ErrUnconfirmed)
			if tt.accepted {
				// Slack keeps the post, but the answer is lost.
				e.fakeSlack.before = func(r meetingbot.Reminder) {
					e.fakeSlack.before = nil
					e.fakeSlack.Notify(context.Background(), r)
					e.fakeSlack.FailNext("alice", ambiguous)
				}
			} else {
				e.fakeSlack.FailNext("alice", ambiguous)
			}
			e.fakeSlack.lookupFail = tt.lookups
			e.tickEvery(at("08:50"), at("08:55"), 30*time.Second)

			assert.Len(t, e.fakeSlack.Deliveries(), tt.want, "deliveries")
			rows := e.ledger()
			require.Len(t, rows, 1)
			assert.Equal(t, meetingbot.Sent, rows[0].Outcome)
			e.restart()
			e.tickEvery(at("08:56"), at("09:05"), time.Minute)
			assert.Len(t, e.fakeSlack.Deliveries(), tt.want, "deliveries after a restart")
		})
	}
}

// A clock that jumps an hour ahead for one tick must not record the
// hour's meetings as started nor move the cursor into the future: once the
// clock is corrected, every reminder goes out as if nothing happened.
func TestClockJumpForwardLosesNothing(t *testing.T) {
	e := newEnv(t)
	logs := &countingHandler{}
	e.opts.Logger = slogNew(logs)
	e.restart()
	e.meeting(cal, "nine", at("09:00"))
	e.meeting(cal, "ninethirty", at("09:30"))
	e.tickAt(at("08:45"))
	e.tickAt(at("08:45:30"))

	e.clock.Jump(time.Hour) // 09:45:30 on the wall, 30 s after the last tick
	e.tickAt(e.clock.Now().Add(30 * time.Second))
	e.tickAt(e.clock.Now().Add(30 * time.Second))
	assert.Empty(t, e.fakeSlack.Deliveries(), "deliveries while the clock is an hour fast")
	assert.Empty(t, e.ledger(), "ledger rows while the clock is an hour fast")
	cur, err := e.store.Cursors(context.Background())
	require.NoError(t, err)
	assert.Equal(t, at("08:45:30"), cur["alice"], "cursor while the clock is an hour fast")
	assert.Equal(t, 1, logs.count("clock jumped forward"), "log lines about the jump")

	e.clock.Jump(-time.Hour) // corrected: 08:46:30
	e.tickEvery(at("08:47"), at("09:35"), 30*time.Second)
	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 2, "deliveries after the correction")
	assert.Equal(t, at("08:50"), got[0].At)
	assert.Equal(t, at("09:20"), got[1].At)
	assert.False(t, got[0].Late || got[1].Late, "on time")
}

// A jump that the clock keeps (a real step, or a host that was suspended)
// is believed after JumpConfirm: the sweep catches up from its cursor.
func TestClockJumpForwardBelievedWhenItHolds(t *testing.T) {
	e := newEnv(t)
	e.restart()
	e.meeting(cal, "ten", at("10:00"))    // started during the jump
	e.meeting(cal, "tenten", at("10:10")) // due, not started
	e.tickAt(at("08:45"))
	e.clock.Jump(75 * time.Minute) // 10:00
	for range 5 {
		e.tickAt(e.clock.Now().Add(30 * time.Second))
	}
	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 1, "deliveries once the jump is believed")
	assert.Equal(t, "tenten", got[0].Meeting.ID)
	assert.Equal(t, at("10:02:30"), got[0].At, "sent at the first tick JumpConfirm after the jump was seen (10:00:30)")
	rows := e.ledger()
	require.Len(t, rows, 2)
	assert.Equal(t, meetingbot.Skipped, rows[0].Outcome, "the 10:00 meeting, started by then")
}

// The claims a removed subscription left in flight are settled, not
// listed on every tick forever.
func TestRemovedSubscriptionsClaimsAreSettled(t *testing.T) {
	e := newEnv(t, sub("alice"), sub("bob"))
	e.meeting("bob@example.com", "b", at("09:00"))
	dying, err := sqlite.Open(context.Background(), e.path)
	require.NoError(t, err)
	en := meetingbot.Entry{Subscription: "bob", Key: meetingbot.Key("b", 10*time.Minute, at("09:00")), EventID: "b",
		Offset: 10 * time.Minute, Start: at("09:00"), TriggerAt: at("08:50")}
	_, _, err = dying.Claim(context.Background(), en, at("08:50"), at("08:52"))
	require.NoError(t, err)
	require.NoError(t, dying.Close()) // killed mid-send

	e.subs = []meetingbot.Subscription{sub("alice")} // bob removed from CALENDARS
	e.restart()
	e.tickAt(at("08:51"))
	orphans, err := e.store.Orphans(context.Background(), "", at("08:51"))
	require.NoError(t, err)
	assert.Empty(t, orphans, "orphans after a tick")
	rows := e.ledger()
	require.Len(t, rows, 1)
	assert.Equal(t, meetingbot.Skipped, rows[0].Outcome)
	assert.Contains(t, rows[0].Reason, "subscription removed")
	assert.Empty(t, e.fakeSlack.Deliveries())
}

// An interrupted send of another engine (an agenda, a channel's change
// notice or agenda) is that engine's to look up: the scheduler, which
// sweeps no subscription of that name, leaves it alone.
func TestAgendaClaimsAreLeftToTheAgenda(t *testing.T) {
	e := newEnv(t, sub("alice"))
	dying, err := sqlite.Open(context.Background(), e.path)
	require.NoError(t, err)
	ens := []meetingbot.Entry{
		{Subscription: meetingbot.AgendaSubscription("U1"), Kind: meetingbot.KindAgenda, Key: meetingbot.AgendaKey("U1", "2026-11-30")},
		{Subscription: meetingbot.FeedSubscription("slack:team=C1"), Kind: meetingbot.KindFeed, Key: "feed:review:0123456789abcdef"},
		{Subscription: meetingbot.ChannelAgendaSubscription("slack:team=C1"), Kind: meetingbot.KindChannelAgenda, Key: meetingbot.ChannelAgendaKey("slack:team=C1", "2026-11-30", false)},
	}
	for _, en := range ens {
		en.Start, en.TriggerAt = at("05:00"), at("08:30")
		_, _, err = dying.Claim(context.Background(), en, at("08:30"), at("08:31"))
		require.NoError(t, err)
	}
	require.NoError(t, dying.Close()) // killed mid-send

	e.restart()
	e.tickAt(at("08:32"))
	orphans, err := e.store.Orphans(context.Background(), "", at("08:32"))
	require.NoError(t, err)
	require.Len(t, orphans, len(ens), "orphans after a tick: each left to its engine")
}

// A send ends a real margin before its claim's lease does, however long
// the claim took to get there: another process (a replica whose clock is
// a little off, or that judges the lease a moment late) takes the key
// once the lease ends, and a send still in flight then is a duplicate.
// Here an interrupted send is looked up in Slack for a minute before it
// is sent again, which left exactly the send timeout of its lease.
func TestSendEndsWellBeforeItsLease(t *testing.T) {
	e := newEnv(t)
	e.meeting(cal, "sync", at("09:00"))
	e.fakeSlack.FailNext("alice", fmt.Errorf("slack: 503 after posting: %w", meetingbot.ErrUnconfirmed))
	e.tickAt(at("08:50"))    // unconfirmed: released, looked up first next time
	lease := 2 * time.Minute // the default
	e.fakeSlack.beforeLookup = func(meetingbot.Reminder) {
		e.fakeSlack.beforeLookup = nil
		e.clock.Set(e.clock.Now().Add(lease / 2)) // a slow lookup: the default send timeout
	}
	var margin time.Duration
	sent := false
	e.fakeSlack.sending = func(ctx context.Context, r meetingbot.Reminder) {
		deadline, ok := ctx.Deadline()
		require.True(t, ok, "the send has a deadline")
		rows, err := e.store.Entries(context.Background(), "alice", []string{r.Key})
		require.NoError(t, err)
		margin = rows[r.Key].LeaseUntil.Sub(e.clock.Now()) - time.Until(deadline)
		sent = true
	}
	e.tickAt(at("08:51"))
	require.True(t, sent, "the reminder was sent again after the lookup")
	assert.GreaterOrEqual(t, margin, lease/4, "time between the send's deadline and its lease's end")
	assert.Len(t, e.fakeSlack.Deliveries(), 1)
}

// An interrupted snooze send is the timers' to look up: the scheduler,
// which sweeps no subscription of that name, leaves it alone.
func TestSnoozeClaimsAreLeftToTheTimers(t *testing.T) {
	e := newEnv(t, sub("alice"))
	dying, err := sqlite.Open(context.Background(), e.path)
	require.NoError(t, err)
	en := meetingbot.Entry{Subscription: meetingbot.SnoozeSubscription("U1"), Kind: meetingbot.KindSnooze, Key: meetingbot.SnoozeKey("U1", "a:10m:x", at("09:00")),
		Start: at("09:00"), TriggerAt: at("09:00")}
	_, _, err = dying.Claim(context.Background(), en, at("09:00"), at("09:01"))
	require.NoError(t, err)
	require.NoError(t, dying.Close()) // killed mid-send

	e.restart()
	e.tickAt(at("09:01"))
	orphans, err := e.store.Orphans(context.Background(), "", at("09:01"))
	require.NoError(t, err)
	require.Len(t, orphans, 1, "orphans after a tick")
	assert.Equal(t, en.Key, orphans[0].Key)
}

// holder is the SQLite store with a heartbeat's hold on its claims, as
// PostgreSQL's is: lapse ends every Hold.
type holder struct {
	*sqlite.Store
	lapsed chan struct{}
}

func (h holder) Hold(ctx context.Context) (context.Context, context.CancelFunc) {
	held, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(ctx, cancel)
	go func() {
		select {
		case <-h.lapsed:
			cancel()
		case <-held.Done():
		}
	}()
	return held, func() { stop(); cancel() }
}

// Over a ledger whose claims the heartbeat holds (replicas on
// PostgreSQL), a send is not bound by its claim's short lease, which only
// covers the time a death takes to show: Slack's pace may hold a post
// longer. It is cut when the heartbeat lapses, and then looked up in
// Slack before any resend.
func TestHeldSendOutlastsItsLease(t *testing.T) {
	e := newEnv(t)
	lapsed := make(chan struct{})
	e.wrap = func(st *sqlite.Store) scheduler.Ledger { return holder{st, lapsed} }
	e.opts.Lease = 6 * time.Second
	e.restart()
	e.meeting(cal, "sync", at("09:00"))
	var left time.Duration
	e.fakeSlack.sending = func(ctx context.Context, r meetingbot.Reminder) {
		deadline, _ := ctx.Deadline()
		left = time.Until(deadline)
	}
	e.tickAt(at("08:50"))
	assert.Greater(t, left, 30*time.Second, "time the send had, with a lease of 6s")
	require.Len(t, e.fakeSlack.Deliveries(), 1)

	e.meeting(cal, "retro", at("09:10"))
	e.fakeSlack.sending = func(ctx context.Context, r meetingbot.Reminder) {
		close(lapsed)
		<-ctx.Done() // the heartbeat lapsed mid-send
	}
	e.fakeSlack.FailNext("alice", fmt.Errorf("slack: cut: %w", meetingbot.ErrUnconfirmed))
	e.tickAt(at("09:00"))
	e.fakeSlack.sending = nil
	rows, err := e.store.Entries(context.Background(), "alice", []string{meetingbot.Key("retro", 10*time.Minute, at("09:10"))})
	require.NoError(t, err)
	for _, row := range rows {
		assert.Equal(t, meetingbot.Sending, row.Outcome, "the cut send, left to be looked up")
		assert.Equal(t, meetingbot.ReasonUnconfirmed, row.Code)
	}
	assert.Len(t, rows, 1)
}

// busyOnce answers the first claim Busy, held by another process until
// free, as a replica that died mid-send leaves it.
type busyOnce struct {
	*sqlite.Store
	free time.Time
	done bool
}

func (b *busyOnce) Claim(ctx context.Context, e meetingbot.Entry, now, leaseUntil time.Time) (meetingbot.ClaimStatus, meetingbot.Entry, error) {
	if !b.done {
		b.done = true
		return meetingbot.Busy, meetingbot.Entry{Owner: "dead-replica", LeaseUntil: b.free}, nil
	}
	return b.Store.Claim(ctx, e, now, leaseUntil)
}

// A claim another process holds is asked for again as soon as it may be
// free, not at the subscription's next sweep: a reminder left by a
// replica killed mid-send goes out then, before its meeting starts.
func TestBusyClaimIsAskedForAgainWhenItMayBeFree(t *testing.T) {
	e := newEnv(t, sub("alice", 10*time.Second))
	e.opts.Interval = 10 * time.Second
	e.wrap = func(st *sqlite.Store) scheduler.Ledger { return &busyOnce{Store: st, free: at("08:59:54")} }
	e.restart()
	e.meeting(cal, "sync", at("09:00"))
	e.tickAt(at("08:59:51")) // due at 08:59:50, claimed by a dead replica until 08:59:54
	require.Empty(t, e.fakeSlack.Deliveries())
	e.clock.Set(at("08:59:55"))
	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 1, "reminders by 08:59:55, before the next sweep at 09:00:01")
	assert.True(t, got[0].At.Before(at("08:59:55")), "sent at %v, just after the claim may be free", got[0].At)
}

// A claim Busy with its free instant already past (SQLite's flock says
// its owner lives on past the lease) is not asked for again at once: it
// would be Busy again, and asked for again, in a loop for as long as the
// owner's send lasts. The subscription's next sweep asks.
func TestBusyClaimPastItsLeaseIsNotAskedForAgainAtOnce(t *testing.T) {
	e := newEnv(t, sub("alice", 10*time.Second))
	e.opts.Interval = 10 * time.Second
	e.wrap = func(st *sqlite.Store) scheduler.Ledger { return &busyOnce{Store: st, free: at("08:59:40")} }
	e.restart()
	e.meeting(cal, "sync", at("09:00"))
	e.tickAt(at("08:59:51")) // due at 08:59:50, held by a live process past its lease
	e.clock.Set(at("08:59:52"))
	assert.Empty(t, e.fakeSlack.Deliveries(), "asked for again before the next sweep")
	assert.Equal(t, 1, e.cal.readsOf(cal), "sweeps of alice")
}
