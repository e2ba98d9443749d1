package scheduler_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// crowd returns an env of n people, each with a 10m reminder of a meeting
// at 09:00, posting ahead up to early at perMinute posts a minute.
func crowd(t *testing.T, n int, early time.Duration, perMinute float64) *env {
	subs := make([]meetingbot.Subscription, n)
	for i := range subs {
		subs[i] = sub(fmt.Sprintf("p%02d", i))
	}
	e := newEnv(t, subs...)
	e.opts.Early = early
	e.opts.PostsPerMinute = func() float64 { return perMinute }
	e.restart()
	for _, s := range subs {
		e.meeting(s.CalendarID, "standup-"+s.ID, at("09:00"))
	}
	return e
}

// Ten reminders due in the same second, a budget of a post a second: the
// last three go at the trigger together (the budget's burst, two seconds'
// worth), the others each in a slot of their own, the first seven seconds
// before the trigger, each once; without posting ahead all go at the
// trigger, where Slack's budget would hold them back.
func TestPostAheadSpreadsACrowd(t *testing.T) {
	for _, early := range []time.Duration{5 * time.Minute, 0} {
		t.Run(fmt.Sprint("early=", early), func(t *testing.T) {
			e := crowd(t, 10, early, 60)
			e.tickEvery(at("08:49:00"), at("08:52"), 30*time.Second)
			got := e.fakeSlack.Deliveries()
			require.Len(t, got, 10, "one reminder each")
			var instants []time.Time
			for _, d := range got {
				instants = append(instants, d.At)
				assert.False(t, d.Late, "%s posted ahead counts as on time", d.Subscription.ID)
			}
			slices.SortFunc(instants, time.Time.Compare)
			if early == 0 {
				assert.Equal(t, at("08:50"), instants[0], "without posting ahead, all at the trigger")
				assert.Equal(t, at("08:50"), instants[9])
				return
			}
			for i, at0 := range instants {
				want := at("08:49:53").Add(time.Duration(min(i, 7)) * time.Second)
				assert.Equal(t, want, at0, "reminder %d of the crowd", i)
			}
			e.tickEvery(at("08:52:30"), at("09:05"), 30*time.Second)
			assert.Len(t, e.fakeSlack.Deliveries(), 10, "the sweeps after their triggers send nothing more")
			for _, entry := range e.ledger() {
				assert.Equal(t, meetingbot.Sent, entry.Outcome, entry.Key)
			}
		})
	}
}

// The lead is bounded: 100 reminders at a post every 2 s would need 200 s
// before the trigger, but a 10m reminder goes at most a quarter of its
// offset ahead, 2m30s: those the lead cannot bring early enough all go
// at its start, and wait their turn at the notifier's budget, which
// orders them by meeting start.
func TestPostAheadIsBounded(t *testing.T) {
	e := crowd(t, 100, 5*time.Minute, 30)
	e.tickEvery(at("08:45:00"), at("08:51"), 30*time.Second)
	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 100)
	first, atLead := got[0].At, 0
	for _, d := range got {
		if d.At.Before(first) {
			first = d.At
		}
		if d.At.Equal(at("08:47:30")) {
			atLead++
		}
	}
	assert.Equal(t, at("08:47:30"), first, "the earliest post: 2m30s ahead, a quarter of the 10m offset")
	assert.Equal(t, 24, atLead, "those the lead cannot bring early enough go at its start")
}

// A meeting moved after its reminder went out ahead: the message is
// edited, and the meeting gets its reminder for the new time, once; a
// meeting cancelled before its slot gets nothing.
func TestPostAheadFollowsItsMeeting(t *testing.T) {
	e := crowd(t, 10, 5*time.Minute, 60)
	e.tickAt(at("08:49:30"))
	e.cal.Cancel("p09@example.com", "standup-p09") // before its slot
	e.clock.Set(at("08:49:57"))
	posted := len(e.fakeSlack.Deliveries())
	require.Positive(t, posted, "some posted ahead by 08:49:57")
	moved := e.fakeSlack.Deliveries()[0].Subscription
	e.meeting(moved.CalendarID, "standup-"+moved.ID, at("09:30"))
	e.tickEvery(at("08:50:00"), at("09:21"), 30*time.Second)
	byKey := map[string]int{}
	for _, d := range e.fakeSlack.Deliveries() {
		byKey[d.Key]++
		assert.NotEqual(t, "p09", d.Subscription.ID, "the cancelled meeting is not reminded")
	}
	for k, n := range byKey {
		assert.Equal(t, 1, n, "%s posted once", k)
	}
	assert.Len(t, byKey, 10, "nine at 09:00, and the moved one again for 09:30")
	edits := e.fakeSlack.Edits()
	require.Len(t, edits, 1, "the reminder posted ahead is edited when its meeting moves")
	assert.Equal(t, moved.ID, edits[0].Reminder.Subscription.ID)
	assert.Equal(t, meetingbot.EditMoved, edits[0].Kind)
}

// A send carries its reminder's deadline as its urgency, the instant
// after which the notifier's posting budget does not post it: the
// meeting's start, or StartGrace after it for a "starting now" reminder,
// which goes out at the start.
func TestSendCarriesTheDeadline(t *testing.T) {
	for _, tt := range []struct {
		offset time.Duration
		want   time.Time
	}{
		{10 * time.Minute, at("09:00")},
		{0, at("09:00").Add(meetingbot.StartGrace)},
	} {
		t.Run(fmt.Sprint("offset=", tt.offset), func(t *testing.T) {
			e := newEnv(t, sub("alice", tt.offset))
			var got []time.Time
			e.fakeSlack.sending = func(ctx context.Context, r meetingbot.Reminder) {
				u, _ := meetingbot.Urgency(ctx)
				got = append(got, u)
			}
			e.meeting(cal, "sync", at("09:00"))
			e.tickEvery(at("08:49:30"), at("09:00:30"), 30*time.Second)
			require.Len(t, got, 1, "sends")
			assert.Equal(t, tt.want, got[0])
		})
	}
}

// A flood of one person's reminders due at one instant goes as one digest
// message, one post: it takes one slot of the budget, so it and another
// person's reminder at the same instant both go at their trigger.
func TestPostAheadCountsADigestAsOnePost(t *testing.T) {
	e := newEnv(t, sub("alice"), sub("bob"))
	e.opts.Early = 5 * time.Minute
	e.opts.PostsPerMinute = func() float64 { return 60 }
	e.restart()
	for i := range 45 {
		e.meeting("alice@example.com", fmt.Sprintf("invite%02d", i), at("09:00"))
	}
	e.meeting("bob@example.com", "standup", at("09:00"))
	e.tickEvery(at("08:45:00"), at("08:50:30"), 30*time.Second)
	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 46, "45 reminders in alice's digest and bob's")
	for _, d := range got {
		assert.Equal(t, at("08:50"), d.At, "%s at its trigger", d.Key)
	}
}
