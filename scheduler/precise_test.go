package scheduler_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/scheduler"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A reminder planned by a sweep goes out at its trigger instant, not at the
// next sweep, and counts as on time.
func TestTimerSendsAtTheTrigger(t *testing.T) {
	e := newEnv(t)
	e.meeting(cal, "sync", at("09:00:07"))
	e.tickAt(at("08:49:40")) // plans the 08:50:07 trigger
	e.clock.Set(at("08:50:30"))

	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 1)
	assert.Equal(t, at("08:50:07"), got[0].At, "sent at the trigger")
	assert.False(t, got[0].Late)
	assert.Equal(t, 1, e.cal.gets, "one check against the calendar before sending")
	e.tickEvery(at("08:50:30"), at("09:05"), 30*time.Second)
	assert.Len(t, e.fakeSlack.Deliveries(), 1, "the sweeps after it send nothing more")
}

// A sweep whose read of the calendar took a while (a slow answer, a wait
// for the quota) still arms its timers for the trigger: they count from
// the clock when armed, not from the instant the sweep began.
func TestTimerArmedAfterASlowReadSendsAtTheTrigger(t *testing.T) {
	e := newEnv(t)
	e.meeting(cal, "sync", at("09:00:07"))
	e.cal.slowRead = func() { e.clock.Advance(5 * time.Second) }
	e.tickAt(at("08:49:40")) // reads until 08:49:45, plans the 08:50:07 trigger
	e.clock.Set(at("08:50:30"))

	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 1)
	assert.Equal(t, at("08:50:07"), got[0].At, "sent at the trigger, not 5s after it")
	assert.False(t, got[0].Late)
}

// deadlineCalendar records the deadline of each check's context.
type deadlineCalendar struct {
	*fakeCalendar
	mu        sync.Mutex
	deadlines []time.Duration // from the call
}

func (d *deadlineCalendar) Meeting(ctx context.Context, sub meetingbot.Subscription, id string) (meetingbot.Meeting, error) {
	if dl, ok := ctx.Deadline(); ok {
		d.mu.Lock()
		d.deadlines = append(d.deadlines, time.Until(dl))
		d.mu.Unlock()
	}
	return d.fakeCalendar.Meeting(ctx, sub, id)
}

// A check is over by the trigger: one that the calendar (or the quota)
// keeps waiting lets the reminder go out on time on the sweep's reading,
// rather than CheckTimeout late.
func TestCheckEndsByTheTrigger(t *testing.T) {
	e := newEnv(t)
	src := &deadlineCalendar{fakeCalendar: e.cal}
	e.fireOnce(src, e.fakeSlack, scheduler.Options{CheckTimeout: time.Minute})

	require.Len(t, e.fakeSlack.Deliveries(), 1)
	src.mu.Lock()
	defer src.mu.Unlock()
	require.Len(t, src.deadlines, 1, "checks")
	assert.LessOrEqual(t, src.deadlines[0], time.Second, "a check fired 1s before its trigger has at most until the trigger, not CheckTimeout (1m)")
}

// fireOnce runs a scheduler over src and n (opts with e's clock) through a
// 09:00 meeting's 08:50 reminder: a sweep at 08:49:40 plans it, and the
// clock moves to 08:50:10, past its timer.
func (e *env) fireOnce(src scheduler.Source, n scheduler.Notifier, opts scheduler.Options) {
	e.t.Helper()
	opts.Clock, opts.Logger = e.clock, discardLogger()
	s, err := scheduler.New(e.subs, src, n, e.store, opts)
	require.NoError(e.t, err)
	e.t.Cleanup(s.Stop)
	e.meeting(cal, "sync", at("09:00"))
	e.clock.Set(at("08:49:40"))
	require.NoError(e.t, s.Tick(e.t.Context()))
	e.clock.Set(at("08:50:10"))
}

// What changes in the calendar after the sweep that planned a timer, and
// before the timer's check, is seen by the check.
func TestTimerChecksTheMeetingBeforeSending(t *testing.T) {
	tests := []struct {
		name   string
		change func(e *env)
		want   []time.Time // delivery instants
		starts []time.Time // of the meetings reminded
	}{
		{"cancelled 3s before its trigger", func(e *env) { e.cal.Cancel(cal, "sync") }, nil, nil},
		{"moved later 3s before its trigger", func(e *env) { e.meeting(cal, "sync", at("09:30")) },
			[]time.Time{at("09:20")}, []time.Time{at("09:30")}},
		{"moved earlier, past its trigger, 3s before the old trigger", func(e *env) { e.meeting(cal, "sync", at("08:55")) },
			[]time.Time{at("08:49:59")}, []time.Time{at("08:55")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.meeting(cal, "sync", at("09:00"))
			e.tickAt(at("08:49:30")) // plans the 08:50 trigger
			e.clock.Set(at("08:49:57"))
			tt.change(e)
			e.tickEvery(at("08:50"), at("09:40"), 30*time.Second)

			got := e.fakeSlack.Deliveries()
			require.Len(t, got, len(tt.want), "deliveries")
			for i, d := range got {
				assert.Equal(t, tt.want[i], d.At, "delivery %d sent at", i)
				assert.Equal(t, tt.starts[i], d.Meeting.Start, "delivery %d is for the start", i)
				assert.True(t, d.At.Before(d.Meeting.Start), "delivery %d before the meeting", i)
			}
		})
	}
}

// A check the calendar cannot answer does not cost the reminder: it goes
// out on the sweep's reading, at its trigger.
func TestTimerSendsWhenTheCheckCannotAnswer(t *testing.T) {
	e := newEnv(t)
	e.meeting(cal, "sync", at("09:00"))
	e.tickAt(at("08:49:40"))
	e.cal.Fail(cal, fmt.Errorf("calendar: 503"))
	e.clock.Set(at("08:50:10"))
	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 1)
	assert.Equal(t, at("08:50"), got[0].At)
}

// A stopped scheduler (a process killed or shut down) fires none of its
// timers; the next process sends what came due meanwhile, once.
func TestStoppedSchedulerFiresNoTimer(t *testing.T) {
	e := newEnv(t)
	e.meeting(cal, "sync", at("09:00"))
	e.tickAt(at("08:49:40"))
	e.restart() // killed with the timer armed
	e.clock.Set(at("08:52"))
	assert.Empty(t, e.fakeSlack.Deliveries(), "deliveries by the killed process's timer")
	e.tickAt(at("08:52"))
	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 1, "deliveries after the restart")
	assert.Equal(t, at("08:52"), got[0].At)
}

// blockingCalendar hangs the reads of one calendar until released.
type blockingCalendar struct {
	*fakeCalendar
	slow    string
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *blockingCalendar) Meetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
	if sub.CalendarID == b.slow {
		b.once.Do(func() { close(b.entered) })
		select {
		case <-b.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return b.fakeCalendar.Meetings(ctx, sub, from, to)
}

// No subscription waits for another: a calendar read that hangs and a
// destination with 90 reminders due in the same minute leave another
// subscription's reminder on time, in Run as the binary runs it.
func TestSlowSubscriptionDelaysNoOther(t *testing.T) {
	e := newEnv(t, sub("slow"), sub("flood", 40*time.Second, 5*time.Second), sub("eng", 0))
	bc := &blockingCalendar{fakeCalendar: e.cal, slow: "slow@example.com", entered: make(chan struct{}), release: make(chan struct{})}
	defer close(bc.release)
	for i := range 45 {
		e.meeting("flood@example.com", fmt.Sprintf("invite%02d", i), at("09:00"))
	}
	e.meeting("slow@example.com", "slow", at("09:00"))
	e.meeting("eng@example.com", "standup", at("09:00"))
	e.clock.Set(at("08:59:00"))
	s, err := scheduler.New(e.subs, bc, e.fakeSlack, e.store, e.opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	<-bc.entered // the first round is under way, the slow read hanging
	for e.clock.Pending() < 1+45*2+1 {
		time.Sleep(time.Millisecond) // the other sweeps plan their timers
	}
	e.clock.Set(at("09:00:05"))

	var eng []delivery
	for _, d := range e.fakeSlack.Deliveries() {
		if d.Subscription.ID == "eng" {
			eng = append(eng, d)
		}
	}
	require.Len(t, eng, 1, "eng's reminder while slow's read hangs and flood's 90 go out")
	assert.Equal(t, at("09:00"), eng[0].At, "eng's 0 offset reminder on time")
	cancel() // ends the hanging read too
	require.NoError(t, <-done)
}

// A flood of invitations at one instant goes out as one digest message per
// offset, on time, instead of 45 posts paced a second apart whose last
// ones would come after the meetings started; a subscription of its own
// (the eng channel) is unaffected.
func TestFloodAtOneInstantGoesOutAsOneDigest(t *testing.T) {
	e := newEnv(t, sub("flood", 40*time.Second, 5*time.Second), sub("eng", 0), sub("few", 40*time.Second))
	for i := range 45 {
		e.meeting("flood@example.com", fmt.Sprintf("invite%02d", i), at("09:00"))
	}
	for i := range 5 {
		e.meeting("few@example.com", fmt.Sprintf("few%d", i), at("09:00"))
	}
	e.meeting("eng@example.com", "standup", at("09:00"))
	e.tickEvery(at("08:58:30"), at("09:01"), 30*time.Second)

	messages := map[string]map[string]int{} // subscription -> ts -> reminders
	for _, d := range e.fakeSlack.Deliveries() {
		if messages[d.Subscription.ID] == nil {
			messages[d.Subscription.ID] = map[string]int{}
		}
		messages[d.Subscription.ID][d.TS]++
		assert.Equal(t, d.TriggerAt, d.At, "%s %s sent at its trigger", d.Subscription.ID, d.Key)
	}
	assert.Len(t, messages["flood"], 2, "flood: one digest per offset")
	for ts, n := range messages["flood"] {
		assert.Equal(t, 45, n, "reminders in digest %s", ts)
	}
	assert.Len(t, messages["few"], 5, "five at one instant go out one by one")
	assert.Len(t, messages["eng"], 1)
	for _, row := range e.ledger() {
		require.Equal(t, meetingbot.Sent, row.Outcome, "%s %s", row.Subscription, row.Key)
		if row.Subscription == "flood" {
			assert.Equal(t, meetingbot.ReasonDigest, row.Code, "the ledger says it went in a digest")
		}
	}
}

// Reminders found due late by a sweep (the bot was down) go out as a
// digest too, once, and a restart after it sends nothing more.
func TestLateFloodGoesOutAsOneDigest(t *testing.T) {
	e := newEnv(t, sub("flood", 10*time.Minute))
	for i := range 12 {
		e.meeting("flood@example.com", fmt.Sprintf("invite%02d", i), at("09:00"))
	}
	e.tickAt(at("08:45"))
	e.restart() // down over the 08:50 trigger
	e.tickAt(at("08:53"))
	e.restart()
	e.tickEvery(at("08:53:30"), at("09:00"), 30*time.Second)
	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 12)
	for _, d := range got {
		assert.Equal(t, at("08:53"), d.At)
		assert.Equal(t, 12, d.Digest, "reminders in its message")
		assert.True(t, d.Late)
	}
}

// Timers due at one instant are checked together: one calendar read for
// all, then one read each only for those not found at their start, which
// are told apart (moved, cancelled) and not sent at the old time.
func TestTimersDueTogetherAreCheckedTogether(t *testing.T) {
	e := newEnv(t)
	for i := range 9 {
		e.meeting(cal, fmt.Sprintf("m%d", i), at("09:00"))
	}
	e.tickAt(at("08:49:30"))
	reads, gets := e.cal.reads, e.cal.gets
	e.clock.Set(at("08:49:57"))
	e.cal.Cancel(cal, "m0")
	e.meeting(cal, "m1", at("09:30"))
	e.clock.Set(at("08:50:10"))

	assert.Equal(t, 1, e.cal.reads-reads-1, "calendar reads of the check (besides the sweep of the moved one's subscription)")
	assert.Equal(t, 2, e.cal.gets-gets, "single reads, for the two not found")
	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 7)
	for _, d := range got {
		assert.Equal(t, at("08:50"), d.At)
		assert.Equal(t, 7, d.Digest)
		assert.NotContains(t, []string{"m0", "m1"}, d.Meeting.ID)
	}
}

// Over a mirror (a FreshSource) a timer's check is one sync of the
// calendar, which counts as its resync, not a read of the meeting; only a
// meeting the sync does not show at its start is read alone, to tell a
// move from a cancellation.
func TestCheckOverAMirrorIsOneSync(t *testing.T) {
	for _, tt := range []struct {
		name        string
		change      func(e *env)
		fresh, gets int
		want        []time.Time // delivery instants
	}{
		{"unchanged", func(*env) {}, 1, 0, []time.Time{at("08:50")}},
		{"moved later 3s before its trigger", func(e *env) { e.meeting(cal, "sync", at("09:30")) }, 1, 1, []time.Time{at("09:20")}},
		{"cancelled 3s before its trigger", func(e *env) { e.cal.Cancel(cal, "sync") }, 1, 1, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.fakeMirror = true
			e.restart()
			e.meeting(cal, "sync", at("09:00"))
			e.tickAt(at("08:49:30")) // plans the 08:50 trigger
			e.clock.Set(at("08:49:57"))
			tt.change(e)
			e.clock.Set(at("08:50:10"))

			assert.Equal(t, tt.fresh, e.cal.fresh, "syncs by the check")
			assert.Equal(t, tt.gets, e.cal.gets, "meetings read alone")
			e.tickEvery(at("08:50:30"), at("09:40"), 30*time.Second)
			var got []time.Time
			for _, d := range e.fakeSlack.Deliveries() {
				got = append(got, d.At)
			}
			assert.Equal(t, tt.want, got, "deliveries")
		})
	}
}

// lookingSlack is the fake Slack with DestinationLookup: it records when,
// by the clock, each lookup came and how long it was given.
type lookingSlack struct {
	*fakeSlack
	now     func() time.Time
	mu      sync.Mutex
	at      []time.Time
	budgets []time.Duration
}

func (l *lookingSlack) LookUp(ctx context.Context, sub meetingbot.Subscription) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.at = append(l.at, l.now())
	if dl, ok := ctx.Deadline(); ok {
		l.budgets = append(l.budgets, time.Until(dl))
	}
	return nil
}

// A timer looks its destination up beside its check, a second before the
// trigger and with until the trigger to finish, so that the first reminder
// to a destination does not wait for the lookup after its trigger.
func TestTimerLooksTheDestinationUpBeforeTheTrigger(t *testing.T) {
	e := newEnv(t)
	ls := &lookingSlack{fakeSlack: e.fakeSlack, now: e.clock.Now}
	e.fireOnce(e.cal, ls, scheduler.Options{})

	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 1)
	assert.Equal(t, at("08:50"), got[0].At, "sent at the trigger")
	ls.mu.Lock()
	defer ls.mu.Unlock()
	assert.Equal(t, []time.Time{at("08:49:59")}, ls.at, "lookups: one, a second before the trigger")
	require.Len(t, ls.budgets, 1)
	assert.LessOrEqual(t, ls.budgets[0], time.Second, "the lookup has until the trigger")
}
