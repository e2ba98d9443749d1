package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/scheduler"
	"github.com/meetingbot/meetingbot/storage/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests in this file follow docs/design.md's "A reminder follows its
// meeting": a sent reminder's message is edited when its meeting moves
// before it starts, is cancelled, or moves back.

// change is something done to the calendar right after the sweep at At.
type change struct {
	At time.Time
	Do func(e *env)
}

// run sweeps every 30 s from 08:45 to 10:00, as Run would, applying each
// change after the sweep at its instant.
func (e *env) run(changes ...change) {
	e.t.Helper()
	for t := at("08:45"); !t.After(at("10:00")); t = t.Add(30 * time.Second) {
		e.tickAt(t)
		for _, c := range changes {
			if c.At.Equal(t) {
				c.Do(e)
			}
		}
	}
}

// says is what an edit made the message say, for comparing.
type says struct {
	At      time.Time
	Kind    meetingbot.EditKind
	MovedTo time.Time
	Follows bool
}

func editsOf(es []edit) []says {
	var out []says
	for _, ed := range es {
		out = append(out, says{ed.At, ed.Kind, ed.MovedTo, ed.Follows})
	}
	return out
}

// sentAs is one reminder delivered: when, and for which start.
type sentAs struct{ At, Start time.Time }

func sentOf(ds []delivery) []sentAs {
	var out []sentAs
	for _, d := range ds {
		out = append(out, sentAs{d.At, d.Meeting.Start})
	}
	return out
}

func TestReminderFollowsItsMeeting(t *testing.T) {
	moveTo := func(hhmm string) func(e *env) { return func(e *env) { e.meeting(cal, "sync", at(hhmm)) } }
	cancel := func(e *env) { e.cal.Cancel(cal, "sync") }
	decline := func(e *env) { e.cal.Decline(cal, "sync") }
	tests := []struct {
		name    string
		changes []change
		sent    []sentAs
		edits   []says
		// gets counts the Calendar events.get calls: one by the timer
		// before each reminder it sends, and those of following.
		gets int
		last says // what the first reminder's message says at the end, per the ledger
	}{
		{
			name:    "moved within the window after its reminder",
			changes: []change{{at("08:52"), moveTo("09:02")}},
			// The new start's reminder is late, so it goes out with the edit.
			sent:  []sentAs{{at("08:50"), at("09:00")}, {at("08:52:30"), at("09:02")}},
			edits: []says{{at("08:52:30"), meetingbot.EditMoved, at("09:02"), true}},
			gets:  1, // the listing shows the move
			last:  says{Kind: meetingbot.EditMoved, MovedTo: at("09:02")},
		},
		{
			name:    "moved an hour later after its reminder",
			changes: []change{{at("08:52"), moveTo("10:00")}},
			sent:    []sentAs{{at("08:50"), at("09:00")}, {at("09:50"), at("10:00")}},
			edits:   []says{{at("08:52:30"), meetingbot.EditMoved, at("10:00"), true}},
			// Two timers' checks; one events.get tells the move beyond the
			// window at 08:52:30, then one every tenth of the time left, at
			// least 5 minutes (08:59:30, 09:05, 09:10 … 09:45), until 10:00
			// is in the window at 09:49.
			gets: 2 + 1 + 10,
			last: says{Kind: meetingbot.EditMoved, MovedTo: at("10:00")},
		},
		{
			name:    "cancelled after its reminder",
			changes: []change{{at("08:52"), cancel}},
			sent:    []sentAs{{at("08:50"), at("09:00")}},
			edits:   []says{{at("08:52:30"), meetingbot.EditCancelled, time.Time{}, false}},
			gets:    1 + 1, // asked once; a cancelled message is not asked about again
			last:    says{Kind: meetingbot.EditCancelled},
		},
		{
			// Declined from Slack or anywhere else: the message says "You
			// declined", not "Cancelled".
			name:    "declined after its reminder",
			changes: []change{{at("08:52"), decline}},
			sent:    []sentAs{{at("08:50"), at("09:00")}},
			edits:   []says{{at("08:52:30"), meetingbot.EditDeclined, time.Time{}, false}},
			gets:    1 + 1, // asked once; a declined message is not asked about again
			last:    says{Kind: meetingbot.EditDeclined},
		},
		{
			name:    "declined, then accepted again",
			changes: []change{{at("08:52"), decline}, {at("08:54"), moveTo("09:00")}},
			sent:    []sentAs{{at("08:50"), at("09:00")}},
			edits: []says{
				{at("08:52:30"), meetingbot.EditDeclined, time.Time{}, false},
				{at("08:54:30"), meetingbot.EditRestored, time.Time{}, false},
			},
			gets: 1 + 1,
			last: says{Kind: meetingbot.EditRestored},
		},
		{
			name:    "moved twice",
			changes: []change{{at("08:52"), moveTo("09:30")}, {at("08:54"), moveTo("09:40")}},
			sent:    []sentAs{{at("08:50"), at("09:00")}, {at("09:30"), at("09:40")}},
			edits: []says{
				{at("08:52:30"), meetingbot.EditMoved, at("09:30"), true},
				{at("08:57:30"), meetingbot.EditMoved, at("09:40"), true}, // the next read, 5 minutes on
			},
			gets: 2 + 1 + 7,
			last: says{Kind: meetingbot.EditMoved, MovedTo: at("09:40")},
		},
		{
			name:    "moved, then moved back",
			changes: []change{{at("08:52"), moveTo("09:30")}, {at("08:54"), moveTo("09:00")}},
			// The original reminder stands: no new one for 09:00.
			sent: []sentAs{{at("08:50"), at("09:00")}},
			edits: []says{
				{at("08:52:30"), meetingbot.EditMoved, at("09:30"), true},
				{at("08:54:30"), meetingbot.EditRestored, time.Time{}, false}, // the listing shows it back
			},
			gets: 1 + 1,
			last: says{Kind: meetingbot.EditRestored},
		},
		{
			name:    "cancelled, then put back",
			changes: []change{{at("08:52"), cancel}, {at("08:54"), moveTo("09:00")}},
			sent:    []sentAs{{at("08:50"), at("09:00")}},
			edits: []says{
				{at("08:52:30"), meetingbot.EditCancelled, time.Time{}, false},
				{at("08:54:30"), meetingbot.EditRestored, time.Time{}, false},
			},
			gets: 1 + 1,
			last: says{Kind: meetingbot.EditRestored},
		},
		{
			name:    "moved earlier, after its reminder",
			changes: []change{{at("08:52"), moveTo("08:56")}},
			sent:    []sentAs{{at("08:50"), at("09:00")}, {at("08:52:30"), at("08:56")}},
			edits:   []says{{at("08:52:30"), meetingbot.EditMoved, at("08:56"), true}},
			gets:    1,
			last:    says{Kind: meetingbot.EditMoved, MovedTo: at("08:56")},
		},
		{
			name:    "moved after it started",
			changes: []change{{at("09:02"), moveTo("10:00")}},
			sent:    []sentAs{{at("08:50"), at("09:00")}, {at("09:50"), at("10:00")}},
			edits:   nil,
			gets:    2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.meeting(cal, "sync", at("09:00"))
			e.run(tt.changes...)

			assert.Equal(t, tt.sent, sentOf(e.fakeSlack.Deliveries()), "reminders sent")
			assert.Equal(t, tt.edits, editsOf(e.fakeSlack.Edits()), "edits")
			assert.Equal(t, tt.gets, e.cal.gets, "Calendar events.get calls")
			first := e.fakeSlack.Deliveries()[0]
			for _, ed := range e.fakeSlack.Edits() {
				assert.Equal(t, first.TS, ed.Message.TS, "an edit is of the first reminder's message")
				assert.Equal(t, first.Key, ed.Reminder.Key)
				assert.Equal(t, at("09:00"), ed.Reminder.Meeting.Start, "the edit knows the time the reminder named")
			}
			row := entryOf(t, e, first.Key)
			assert.Equal(t, tt.last.Kind, row.Edit.Kind, "ledger: what the message says")
			assert.Equal(t, tt.last.MovedTo, row.Edit.MovedTo, "ledger: the start it names")
			assert.Equal(t, len(tt.edits), row.Edit.Count, "ledger: edits recorded")
			assert.Empty(t, row.Edit.Code, "ledger: no failure")
		})
	}
}

// entryOf returns the ledger row of key.
func entryOf(t *testing.T, e *env, key string) meetingbot.Entry {
	t.Helper()
	for _, row := range e.ledger() {
		if row.Key == key {
			return row
		}
	}
	t.Fatalf("no ledger row %s", key)
	return meetingbot.Entry{}
}

// Each reminder sent of a meeting is edited; the calendar is asked once
// for them all.
func TestEveryReminderOfAMeetingIsEdited(t *testing.T) {
	e := newEnv(t, sub("alice", 10*time.Minute, time.Minute))
	e.meeting(cal, "sync", at("09:00"))
	e.tickEvery(at("08:45"), at("08:59"), 30*time.Second)
	require.Len(t, e.fakeSlack.Deliveries(), 2)
	gets := e.cal.gets
	e.cal.Cancel(cal, "sync")
	e.tickEvery(at("08:59:30"), at("09:10"), 30*time.Second)

	edits := e.fakeSlack.Edits()
	require.Len(t, edits, 2, "edits")
	assert.ElementsMatch(t, []string{e.fakeSlack.Deliveries()[0].TS, e.fakeSlack.Deliveries()[1].TS}, []string{edits[0].Message.TS, edits[1].Message.TS})
	for _, ed := range edits {
		assert.Equal(t, meetingbot.EditCancelled, ed.Kind)
		assert.Equal(t, at("08:59:30"), ed.At)
	}
	assert.Equal(t, 1, e.cal.gets-gets, "events.get calls to tell the cancel")
}

// A meeting declined after its first reminder gets no other: its later
// reminders are not sent, the one sent says "You declined".
func TestDeclinedMeetingsOtherRemindersStop(t *testing.T) {
	e := newEnv(t, sub("alice", 10*time.Minute, time.Minute))
	e.meeting(cal, "sync", at("09:00"))
	e.tickEvery(at("08:45"), at("08:52"), 30*time.Second)
	require.Len(t, e.fakeSlack.Deliveries(), 1, "reminders before declining")
	e.cal.Decline(cal, "sync")
	e.tickEvery(at("08:52:30"), at("09:10"), 30*time.Second)

	assert.Equal(t, []sentAs{{at("08:50"), at("09:00")}}, sentOf(e.fakeSlack.Deliveries()), "reminders sent")
	assert.Equal(t, []says{{at("08:52:30"), meetingbot.EditDeclined, time.Time{}, false}}, editsOf(e.fakeSlack.Edits()), "edits")
}

// An instance that events.get no longer knows is looked for in the week
// ahead before its reminder says "cancelled": a series split off another
// gives its occurrences new ids, the same instance name (Meeting.Instance).
func TestOccurrenceUnderANewIDIsFoundAhead(t *testing.T) {
	e := newEnv(t)
	e.meeting(cal, "sync_20261130T090000Z", at("09:00"))
	e.tickEvery(at("08:49:30"), at("08:52"), 30*time.Second)
	require.Len(t, e.fakeSlack.Deliveries(), 1)
	e.cal.Cancel(cal, "sync_20261130T090000Z")
	e.cal.Put(cal, meetingbot.Meeting{ID: "sync_R20261130T090000_20261130T090000Z", Instance: "sync_20261130T090000Z", Title: "sync", Start: at("10:00")})
	gets, reads := e.cal.gets, e.cal.reads
	e.tickAt(at("08:52:30"))

	assert.Equal(t, []says{{at("08:52:30"), meetingbot.EditMoved, at("10:00"), true}}, editsOf(e.fakeSlack.Edits()))
	assert.Equal(t, 1, e.cal.gets-gets, "events.get calls")
	assert.Equal(t, 2, e.cal.reads-reads, "events.list calls: the sweep's, and the week ahead once events.get said gone")
}

// An edit is recorded: a restart does not make it again.
func TestRestartDoesNotEditAgain(t *testing.T) {
	e := newEnv(t)
	e.meeting(cal, "sync", at("09:00"))
	e.tickEvery(at("08:49:30"), at("08:52"), 30*time.Second)
	e.meeting(cal, "sync", at("10:00"))
	e.tickAt(at("08:52:30"))
	require.Len(t, e.fakeSlack.Edits(), 1)
	e.restart()
	e.tickEvery(at("08:53"), at("08:56"), 30*time.Second)
	assert.Len(t, e.fakeSlack.Edits(), 1, "edits after a restart")
}

// editCrash is a ledger on which the process dies right after Slack took
// an edit, before the ledger recorded it: RecordEdit fails, and the claim
// stays with the dead process.
type editCrash struct {
	*sqlite.Store
	crashed bool
}

func (l *editCrash) RecordEdit(ctx context.Context, e meetingbot.Entry) error {
	if !l.crashed {
		l.crashed = true
		return errors.New("process killed")
	}
	return l.Store.RecordEdit(ctx, e)
}

// A crash between an edit and its record makes the same edit once more
// after the restart, which leaves the message as it was: an edit sets the
// whole message. It is then recorded, and not made again.
func TestCrashBetweenEditAndRecord(t *testing.T) {
	e := newEnv(t)
	e.meeting(cal, "sync", at("09:00"))
	e.tickEvery(at("08:49:30"), at("08:52"), 30*time.Second)
	crash := &editCrash{}
	e.wrap = func(st *sqlite.Store) scheduler.Ledger { crash.Store = st; return crash }
	e.restart()
	e.meeting(cal, "sync", at("10:00"))
	e.tickAt(at("08:52:30"))
	require.True(t, crash.crashed, "the edit's record failed")
	require.Len(t, e.fakeSlack.Edits(), 1)

	e.wrap = nil
	e.restart() // the process that holds the claim is gone
	e.tickEvery(at("08:53"), at("08:56"), 30*time.Second)
	edits := e.fakeSlack.Edits()
	require.Len(t, edits, 2, "edits: the unrecorded one is made again")
	assert.Equal(t, editsOf(edits[:1])[0].Kind, edits[1].Kind, "the same edit")
	assert.Equal(t, edits[0].MovedTo, edits[1].MovedTo)
	assert.Equal(t, edits[0].Message, edits[1].Message)
	assert.Equal(t, at("08:53"), edits[1].At, "made again at the first sweep after the restart")
	row := entryOf(t, e, edits[0].Reminder.Key)
	assert.Equal(t, meetingbot.EditMoved, row.Edit.Kind)
	assert.Equal(t, 1, row.Edit.Count)
	assert.Empty(t, row.Edit.Owner, "the claim is released")

	e.restart()
	e.tickEvery(at("08:56:30"), at("09:00"), 30*time.Second)
	assert.Len(t, e.fakeSlack.Edits(), 2, "edits after the record and another restart")
}

// Two processes sweeping one subscription at once edit its message once.
func TestTwoProcessesEditOnce(t *testing.T) {
	e := newEnv(t)
	e.meeting(cal, "sync", at("09:00"))
	e.tickEvery(at("08:49:30"), at("08:52"), 30*time.Second)
	b := e.second(e.opts)
	e.meeting(cal, "sync", at("10:00"))
	e.clock.Set(at("08:52:30"))

	// Each edit waits a little, so that the other process reaches its
	// claim while the first is in Slack.
	var mu sync.Mutex
	inSlack := 0
	e.fakeSlack.beforeEdit = func(meetingbot.Follow) {
		mu.Lock()
		inSlack++
		n := inSlack
		mu.Unlock()
		assert.Equal(t, 1, n, "edits in flight at once")
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		inSlack--
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for _, s := range []*scheduler.Scheduler{e.sched, b} {
		wg.Go(func() { assert.NoError(t, s.Tick(context.Background())) })
	}
	wg.Wait()
	e.fakeSlack.beforeEdit = nil
	assert.Len(t, e.fakeSlack.Edits(), 1, "edits by two processes")

	e.clock.Set(at("08:53"))
	require.NoError(t, b.Tick(context.Background()))
	require.NoError(t, e.sched.Tick(context.Background()))
	assert.Len(t, e.fakeSlack.Edits(), 1, "edits after both sweep again")
	row := entryOf(t, e, e.fakeSlack.Deliveries()[0].Key)
	assert.Equal(t, meetingbot.EditMoved, row.Edit.Kind)
	assert.Equal(t, 1, row.Edit.Count)
}

// A transient failure is retried on the next sweep and logged once; a
// permanent one is logged once and the message left as it is, whatever
// the meeting does next.
func TestFailedEdits(t *testing.T) {
	t.Run("transient", func(t *testing.T) {
		logs := &countingHandler{}
		e := newEnv(t)
		e.opts.Logger = slogNew(logs)
		e.restart()
		e.meeting(cal, "sync", at("09:00"))
		e.tickEvery(at("08:49:30"), at("08:52"), 30*time.Second)
		e.fakeSlack.editFail = []error{errors.New("slack: 503"), errors.New("slack: 503")}
		e.meeting(cal, "sync", at("09:05"))
		e.tickEvery(at("08:52:30"), at("08:55"), 30*time.Second)

		assert.Equal(t, 3, e.fakeSlack.editCalls, "edit attempts: two failures, then the edit")
		assert.Equal(t, []says{{at("08:53:30"), meetingbot.EditMoved, at("09:05"), true}}, editsOf(e.fakeSlack.Edits()))
		assert.Equal(t, 1, logs.count("reminder edit failed; retrying"), "warnings")
		row := entryOf(t, e, e.fakeSlack.Deliveries()[0].Key)
		assert.Equal(t, meetingbot.EditMoved, row.Edit.Kind)
		assert.Empty(t, row.Edit.Code, "the failure is cleared by the edit")
	})
	t.Run("permanent", func(t *testing.T) {
		logs := &countingHandler{}
		e := newEnv(t)
		e.opts.Logger = slogNew(logs)
		e.restart()
		e.meeting(cal, "sync", at("09:00"))
		e.tickEvery(at("08:49:30"), at("08:52"), 30*time.Second)
		e.fakeSlack.editFail = []error{meetingbot.Permanent(fmt.Errorf("chat.update: message_not_found"))}
		e.meeting(cal, "sync", at("09:05"))
		e.tickEvery(at("08:52:30"), at("08:54"), 30*time.Second)
		e.meeting(cal, "sync", at("09:10"))
		e.tickEvery(at("08:54:30"), at("09:00"), 30*time.Second)

		assert.Equal(t, 1, e.fakeSlack.editCalls, "edit attempts")
		assert.Empty(t, e.fakeSlack.Edits())
		assert.Equal(t, 1, logs.count("reminder cannot be edited"), "errors logged")
		row := entryOf(t, e, e.fakeSlack.Deliveries()[0].Key)
		assert.Equal(t, meetingbot.ReasonPermanent, row.Edit.Code)
		assert.Contains(t, row.Edit.Reason, "message_not_found")
		assert.Equal(t, meetingbot.NotEdited, row.Edit.Kind, "the message says what it said")
		assert.Len(t, e.fakeSlack.Deliveries(), 2, "the new start is reminded all the same")
	})
}

// The observer hears of each edit made, by kind.
func TestEditsObserved(t *testing.T) {
	e := newEnv(t)
	obs := &editObserver{}
	e.opts.Observer = obs
	e.restart()
	e.meeting(cal, "sync", at("09:00"))
	e.run(
		change{at("08:52"), func(e *env) { e.meeting(cal, "sync", at("09:30")) }},
		change{at("08:54"), func(e *env) { e.meeting(cal, "sync", at("09:00")) }},
	)
	assert.Equal(t, []meetingbot.EditKind{meetingbot.EditMoved, meetingbot.EditRestored}, obs.kinds())
}

// editObserver records the edits it is told of.
type editObserver struct {
	scheduler.Observer
	mu    sync.Mutex
	edits []meetingbot.EditKind
}

func (o *editObserver) Edited(e meetingbot.Entry) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.edits = append(o.edits, e.Edit.Kind)
}

func (o *editObserver) kinds() []meetingbot.EditKind {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.edits
}

func (o *editObserver) Recorded(meetingbot.Entry)                                      {}
func (o *editObserver) Swept(meetingbot.Subscription, time.Time, time.Duration, error) {}
func (o *editObserver) Ticked(time.Time, time.Duration, error)                         {}
func (o *editObserver) Planned(int)                                                    {}
func (o *editObserver) Checked(meetingbot.CheckOutcome)                                {}
func (o *editObserver) Reading(int)                                                    {}
