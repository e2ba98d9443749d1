package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/audit"
)

// The audit covers the snoozes people asked for: each timer due is judged
// against the DMs in the person's history, as a reminder: one sent at its
// instant (delivered), one sent twice after a crash (duplicated), one
// never sent (missing); one whose meeting was cancelled, one that moved
// with its meeting and one the person cancelled are not due.
func TestAuditCoversSnoozes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	user := "U0ALICE001"
	snooze := func(id string, start time.Time) meetingbot.Timer {
		s := meetingbot.Snooze{User: user, Mode: meetingbot.SnoozeAtStart, Reminder: meetingbot.Key(id, 10*time.Minute, start),
			Subscription: "team", Calendar: "team@example.com", Meeting: meeting(id, "Sync "+id, start)}
		tm, added, err := e.store.AddTimer(ctx, s.Timer(start), start.Add(-10*time.Minute))
		require.NoError(t, err)
		require.True(t, added)
		return tm
	}
	end := func(tm meetingbot.Timer, code meetingbot.ReasonCode, when time.Time) {
		_, ok, err := e.store.TakeTimer(ctx, tm.Key, when, time.Minute)
		require.NoError(t, err)
		require.True(t, ok)
		tm.State, tm.Code = meetingbot.TimerDone, code
		require.NoError(t, e.store.FinishTimer(ctx, tm, when))
	}
	send := func(tm meetingbot.Timer, when time.Time, record bool) {
		s, _ := meetingbot.ParseSnooze(tm)
		r := meetingbot.Reminder{Key: tm.Key, Subscription: meetingbot.Subscription{ID: meetingbot.SnoozeSubscription(user), Destination: user},
			Meeting: s.Meeting, TriggerAt: tm.FireAt}
		en := meetingbot.Entry{Subscription: r.Subscription.ID, Key: r.Key, EventID: s.Meeting.ID, Start: s.Meeting.Start, TriggerAt: tm.FireAt}
		if record {
			_, _, err := e.store.Claim(ctx, en, when, when.Add(time.Minute))
			require.NoError(t, err)
		}
		e.clock.Set(when)
		rc, err := e.slack.NotifySnooze(ctx, r, s, false)
		require.NoError(t, err)
		if record {
			e.record(en, meetingbot.Sent, "", "", rc, when)
			end(tm, meetingbot.ReasonSent, when)
		}
	}
	onTime := snooze("a", at(9, 0, 0))
	send(onTime, at(9, 0, 0), true)
	twice := snooze("b", at(10, 0, 0))
	send(twice, at(10, 0, 0), false) // a crash between Slack and the ledger,
	send(twice, at(10, 0, 1), true)  // and the lookup that failed
	never := snooze("c", at(11, 0, 0))
	end(never, meetingbot.ReasonPermanent, at(11, 0, 0))
	end(snooze("d", at(12, 0, 0)), meetingbot.ReasonMeetingCancelled, at(12, 0, 0))
	moved := snooze("e", at(13, 0, 0))
	_, _, err := e.store.TakeTimer(ctx, moved.Key, at(13, 0, 0), time.Minute)
	require.NoError(t, err)
	s, _ := meetingbot.ParseSnooze(moved)
	s.Meeting.Start = at(15, 0, 0)
	require.NoError(t, e.store.MoveTimer(ctx, moved, s.Timer(at(15, 0, 0)), at(13, 0, 0)))
	_, _, err = e.store.CancelTimer(ctx, snooze("f", at(14, 0, 0)).Key, user, at(13, 30, 0))
	require.NoError(t, err)

	in := e.input(day, day.Add(24*time.Hour), at(14, 30, 0))
	in.Subscriptions = nil
	in.Timers = e.store
	r, err := audit.Reconcile(ctx, in)
	require.NoError(t, err)
	require.Len(t, r.Subscriptions, 1)
	sr := r.Subscriptions[0]
	assert.Empty(t, sr.Error)
	assert.Empty(t, sr.SlackError)
	assert.Equal(t, "snooze:U0ALICE001", sr.Subscription)
	assert.Equal(t, audit.FromSlack, sr.CountedFrom)
	assert.Equal(t, 3, sr.Expected, "due: the three not cancelled, moved or ended for their meeting (the moved one's next is after now)")
	keys := func(items []audit.Item) []string {
		var out []string
		for _, it := range items {
			out = append(out, it.Key)
		}
		return out
	}
	assert.Equal(t, []string{onTime.Key}, keys(sr.Delivered), "delivered")
	assert.Equal(t, []string{twice.Key}, keys(sr.Duplicated), "duplicated")
	assert.Equal(t, []string{never.Key}, keys(sr.Missing), "missing")
	assert.Empty(t, sr.Unexpected)
	assert.True(t, r.Problems())
}
