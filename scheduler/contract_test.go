package scheduler_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/scheduler"
	"github.com/meetingbot/meetingbot/storage/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests in this file follow docs/design.md's table "What follows, and is
// tested", one per row, with a pinned clock and a real SQLite file.

const cal = "alice@example.com"

func TestDownBeforeTriggerRemindsLateOnRestart(t *testing.T) {
	e := newEnv(t)
	e.meeting(cal, "standup", at("09:05"))
	e.tickEvery(at("08:50"), at("08:54:30"), 30*time.Second)
	// Down 08:55-09:03; the 10m trigger (08:55) passes while down.
	e.restart()
	e.tickAt(at("09:03"))

	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 1, "deliveries")
	assert.Equal(t, at("09:03"), got[0].At, "delivered at")
	assert.True(t, got[0].Late, "Late = false, want true")
	rows := e.ledger()
	require.Len(t, rows, 1)
	assert.Equal(t, meetingbot.Sent, rows[0].Outcome)
	assert.True(t, rows[0].Late, "ledger late flag")
}

func TestDownAcrossWholeIntervalSkipsAsStarted(t *testing.T) {
	e := newEnv(t)
	e.meeting(cal, "standup", at("09:05"))
	e.tickAt(at("08:50"))
	e.restart()
	e.tickAt(at("09:06"))

	assert.Empty(t, e.fakeSlack.Deliveries(), "deliveries")
	rows := e.ledger()
	require.Len(t, rows, 1, "ledger rows")
	assert.Equal(t, meetingbot.Skipped, rows[0].Outcome)
	assert.Equal(t, "started", rows[0].Reason)
}

func TestMovedBeforeTriggerRemindsOnceForNewTime(t *testing.T) {
	e := newEnv(t)
	e.meeting(cal, "sync", at("09:00"))
	e.tickEvery(at("08:30"), at("08:45"), time.Minute)
	e.meeting(cal, "sync", at("10:00")) // moved at 08:45
	e.tickEvery(at("08:46"), at("10:30"), time.Minute)

	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 1, "deliveries")
	assert.Equal(t, at("09:50"), got[0].At)
	assert.Equal(t, at("10:00"), got[0].Meeting.Start)
	assert.False(t, got[0].Late)
}

func TestMovedAfterReminderRemindsAgain(t *testing.T) {
	e := newEnv(t)
	e.meeting(cal, "sync", at("09:00"))
	e.tickEvery(at("08:40"), at("08:55"), time.Minute)
	e.meeting(cal, "sync", at("10:00"))
	e.tickEvery(at("08:56"), at("10:30"), time.Minute)

	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 2, "deliveries")
	assert.Equal(t, at("08:50"), got[0].At)
	assert.Equal(t, at("09:50"), got[1].At)
	assert.NotEqual(t, got[0].Key, got[1].Key, "a moved meeting gets a new key")
}

func TestCancelledBeforeTriggerSendsNothing(t *testing.T) {
	e := newEnv(t)
	e.meeting(cal, "sync", at("09:00"))
	e.tickEvery(at("08:30"), at("08:45"), time.Minute)
	e.cal.Cancel(cal, "sync")
	e.tickEvery(at("08:46"), at("09:30"), time.Minute)

	assert.Empty(t, e.fakeSlack.Deliveries())
	assert.Empty(t, e.ledger())
}

func TestCreatedAfterTriggerRemindsAtOnce(t *testing.T) {
	e := newEnv(t)
	e.tickEvery(at("08:30"), at("08:57"), time.Minute)
	e.clock.Set(at("08:57:10"))
	e.meeting(cal, "adhoc", at("09:00")) // created 3 minutes before start
	e.tickEvery(at("08:57:30"), at("09:30"), 30*time.Second)

	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 1)
	assert.Equal(t, at("08:57:30"), got[0].At)
	assert.True(t, got[0].Late)
}

func TestStartedAtEightFiftyFiveRemindsOfNine(t *testing.T) {
	e := newEnv(t)
	e.meeting(cal, "nine", at("09:00"))
	e.meeting(cal, "running", at("08:50"))
	e.tickAt(at("08:55"))

	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 1, "a first run reminds of the meeting ahead, never of one already running")
	assert.Equal(t, "nine", got[0].Meeting.ID)
}

func TestTickDelayedSkippedOrRepeated(t *testing.T) {
	ticks := map[string][]time.Time{
		"on time":  {at("08:49"), at("08:50"), at("08:51"), at("08:59"), at("09:00")},
		"delayed":  {at("08:49"), at("08:52:40"), at("08:59:59")},
		"skipped":  {at("08:40"), at("08:55")},
		"repeated": {at("08:49"), at("08:50"), at("08:50"), at("08:50"), at("08:51"), at("08:51")},
		"one late": {at("08:59:30")},
	}
	for name, tt := range ticks {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, sub("alice", 10*time.Minute, time.Minute))
			e.meeting(cal, "sync", at("09:00"))
			for _, tk := range tt {
				e.tickAt(tk)
			}
			keys := map[string]int{}
			for _, d := range e.fakeSlack.Deliveries() {
				keys[d.Key]++
			}
			for k, n := range keys {
				assert.Equal(t, 1, n, "deliveries of %s", k)
			}
			// Every trigger whose [triggerAt, start) holds a tick is delivered.
			for _, off := range []time.Duration{10 * time.Minute, time.Minute} {
				want := false
				for _, tk := range tt {
					if !tk.Before(at("09:00").Add(-off)) && tk.Before(at("09:00")) {
						want = true
					}
				}
				k := meetingbot.Key("sync", off, at("09:00"))
				assert.Equal(t, want, keys[k] == 1, "delivered(%s) = %v, want %v", k, keys[k] == 1, want)
			}
		})
	}
}

func TestTwoProcessesOneDatabaseNoDuplicate(t *testing.T) {
	e := newEnv(t, sub("alice", 10*time.Minute, time.Minute, 0))
	for i := range 20 {
		e.meeting(cal, "m"+string(rune('a'+i)), at("09:00").Add(time.Duration(i)*3*time.Minute))
	}
	other, err := sqlite.Open(context.Background(), e.path)
	require.NoError(t, err)
	defer other.Close()
	opts := e.opts
	second, err := scheduler.New(e.subs, e.cal, e.fakeSlack, other, opts)
	require.NoError(t, err)

	for tk := at("08:45"); tk.Before(at("10:30")); tk = tk.Add(20 * time.Second) {
		e.clock.Set(tk)
		errs := make(chan error, 2)
		go func() { errs <- e.sched.Tick(context.Background()) }()
		go func() { errs <- second.Tick(context.Background()) }()
		require.NoError(t, <-errs)
		require.NoError(t, <-errs)
	}
	keys := map[string]int{}
	for _, d := range e.fakeSlack.Deliveries() {
		keys[d.Key]++
	}
	assert.Len(t, keys, 60, "distinct reminders")
	for k, n := range keys {
		assert.Equal(t, 1, n, "deliveries of %s", k)
	}
}

func TestKilledBetweenSendAndRecordIsConfirmedNotResent(t *testing.T) {
	for _, canLookup := range []bool{true, false} {
		e := newEnv(t)
		e.fakeSlack.canLookup = canLookup
		e.meeting(cal, "sync", at("09:00"))
		e.tickAt(at("08:45"))

		// Another process claims the 08:50 trigger, Slack accepts the
		// message, and the process is killed before its ledger write.
		dying, err := sqlite.Open(context.Background(), e.path)
		require.NoError(t, err)
		r := meetingbot.Reminder{Key: meetingbot.Key("sync", 10*time.Minute, at("09:00")), Subscription: e.subs[0],
			Meeting: meetingbot.Meeting{ID: "sync", Start: at("09:00")}, Offset: 10 * time.Minute, TriggerAt: at("08:50")}
		st, _, err := dying.Claim(context.Background(), meetingbot.Entry{Subscription: "alice", Key: r.Key, EventID: "sync",
			Offset: r.Offset, Start: at("09:00"), TriggerAt: at("08:50")}, at("08:50"), at("08:52"))
		require.NoError(t, err)
		require.Equal(t, meetingbot.Claimed, st)
		_, err = e.fakeSlack.Notify(context.Background(), r)
		require.NoError(t, err)
		require.NoError(t, dying.Close()) // SIGKILL: the kernel drops its lock

		e.restart()
		e.tickAt(at("08:51")) // the lease has not run out, but its owner is gone
		want := 1
		if !canLookup {
			want = 2 // cannot tell: resent once, and recorded so
		}
		assert.Len(t, e.fakeSlack.Deliveries(), want, "deliveries with lookup=%v", canLookup)
		rows := e.ledger()
		require.Len(t, rows, 1)
		assert.Equal(t, meetingbot.Sent, rows[0].Outcome)
		assert.NotEmpty(t, rows[0].Reason, "the ledger says how the interrupted send was resolved")
		e.tickEvery(at("08:52"), at("09:10"), time.Minute)
		assert.Len(t, e.fakeSlack.Deliveries(), want, "no further sends")
	}
}

func TestDSTFallBackOneReminderPerInstance(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	e := newEnv(t)
	// 2026-11-01: 01:00 local happens twice, at 05:00Z (EDT) and 06:00Z (EST).
	first := time.Date(2026, 11, 1, 1, 0, 0, 0, ny)
	second := first.Add(time.Hour)
	require.Equal(t, first.Hour(), second.In(ny).Hour(), "both are 01:00 local")
	e.cal.Put(cal, meetingbot.Meeting{ID: "owl_20261101T050000Z", Title: "owl", Start: first})
	e.cal.Put(cal, meetingbot.Meeting{ID: "owl_20261101T060000Z", Title: "owl", Start: second})
	e.tickEvery(first.Add(-time.Hour), second.Add(time.Hour), 30*time.Second)

	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 2)
	assert.True(t, got[0].Meeting.Start.Equal(first.Add(0)))
	assert.Equal(t, first.Add(-10*time.Minute).UTC(), got[0].At.UTC())
	assert.Equal(t, second.Add(-10*time.Minute).UTC(), got[1].At.UTC())
}

func TestSlackTransientRetriedPermanentRecordedOthersGoOn(t *testing.T) {
	e := newEnv(t, sub("alice"), sub("bob"), sub("carol"))
	for _, who := range []string{"alice", "bob", "carol"} {
		e.meeting(who+"@example.com", who+"-1on1", at("09:00"))
	}
	e.fakeSlack.FailNext("alice", errors.New("slack: 503 service unavailable"), errors.New("slack: timeout"))
	e.fakeSlack.FailNext("bob", meetingbot.Permanent(errors.New("channel_not_found: invite the bot")))
	e.tickEvery(at("08:49"), at("08:53"), 30*time.Second)

	bySub := map[string]int{}
	for _, d := range e.fakeSlack.Deliveries() {
		bySub[d.Subscription.ID]++
	}
	assert.Equal(t, map[string]int{"alice": 1, "carol": 1}, bySub)
	var bob meetingbot.Entry
	for _, r := range e.ledger() {
		if r.Subscription == "bob" {
			bob = r
		}
	}
	assert.Equal(t, meetingbot.Failed, bob.Outcome)
	assert.False(t, bob.Retryable)
	assert.Contains(t, bob.Reason, "channel_not_found")
}

func TestCalendarErrorKeepsCursorAndLosesNothing(t *testing.T) {
	e := newEnv(t, sub("alice"), sub("bob"))
	e.meeting("alice@example.com", "a", at("09:00"))
	e.meeting("bob@example.com", "b", at("09:00"))
	e.tickAt(at("08:40"))
	e.cal.Fail("alice@example.com", errors.New("calendar: 403 rateLimitExceeded"))
	e.tickEvery(at("08:41"), at("08:55"), time.Minute)
	require.Len(t, e.fakeSlack.Deliveries(), 1, "bob goes on while alice's calendar fails")
	cur, err := e.store.Cursors(context.Background())
	require.NoError(t, err)
	assert.Equal(t, at("08:40"), cur["alice"], "alice's cursor stays")
	assert.Equal(t, at("08:55"), cur["bob"])

	e.cal.Fail("alice@example.com", nil)
	e.tickAt(at("08:56"))
	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 2)
	assert.Equal(t, "a", got[1].Meeting.ID)
	assert.True(t, got[1].Late)
}

func TestClockSteppingBackSendsNothing(t *testing.T) {
	e := newEnv(t)
	logs := &countingHandler{}
	e.opts.Logger = slogNew(logs)
	e.restart()
	e.meeting(cal, "sync", at("09:00"))
	e.tickAt(at("08:45"))
	e.tickAt(at("08:46"))
	e.meeting(cal, "early", at("08:30")) // would be a late trigger if anything ran
	e.tickAt(at("08:20"))
	e.tickAt(at("08:21"))
	e.tickAt(at("08:46"))

	assert.Empty(t, e.fakeSlack.Deliveries())
	cur, err := e.store.Cursors(context.Background())
	require.NoError(t, err)
	assert.Equal(t, at("08:46"), cur["alice"])
	assert.Equal(t, 1, logs.count("clock stepped back"), "log lines about the clock")
	e.tickAt(at("08:50"))
	assert.Len(t, e.fakeSlack.Deliveries(), 1)
}

func TestLedgerRowsPrunedAfterRetention(t *testing.T) {
	e := newEnv(t)
	e.meeting(cal, "sync", at("09:00"))
	e.tickEvery(at("08:49"), at("08:51"), time.Minute)
	require.Len(t, e.ledger(), 1)
	e.tickAt(at("09:00").Add(29 * 24 * time.Hour))
	assert.Len(t, e.ledger(), 1, "rows within the 30-day retention")
	e.tickAt(at("09:01").Add(30 * 24 * time.Hour))
	assert.Empty(t, e.ledger(), "rows past the 30-day retention")
}

// hangingSlack accepts every message but answers only when the sender gives
// up: the worst case for a shutdown.
type hangingSlack struct {
	*fakeSlack
	called chan struct{}
}

func (h hangingSlack) Notify(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, error) {
	h.fakeSlack.Notify(ctx, r)
	close(h.called)
	<-ctx.Done()
	return meetingbot.Receipt{}, ctx.Err()
}

func TestShutdownMidSendLeavesClaimForLookup(t *testing.T) {
	e := newEnv(t)
	e.meeting(cal, "sync", at("09:00"))
	e.clock.Set(at("08:55"))
	hang := hangingSlack{e.fakeSlack, make(chan struct{})}
	opts := e.opts
	opts.ShutdownGrace = 50 * time.Millisecond
	s, err := scheduler.New(e.subs, e.cal, hang, e.store, opts)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	<-hang.called
	cancel() // SIGTERM while Slack has the message but has not answered
	select {
	case err := <-done:
		require.NoError(t, err, "Run")
	case <-time.After(5 * time.Second):
		require.Fail(t, "Run did not return within 5s of shutdown")
	}
	rows := e.ledger()
	require.Len(t, rows, 1)
	assert.Equal(t, meetingbot.Sending, rows[0].Outcome, "an unanswered send stays claimed")

	e.restart() // the next process finds the message in Slack: no second send
	e.tickAt(at("08:56"))
	assert.Len(t, e.fakeSlack.Deliveries(), 1)
	rows = e.ledger()
	require.Len(t, rows, 1)
	assert.Equal(t, meetingbot.Sent, rows[0].Outcome)
}
