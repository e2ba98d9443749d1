package postgres_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/storage/postgres"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
	"github.com/meetingbot/meetingbot/storage/storetest"
)

// TestTimerLeaseOnTheDatabasesClock: a timer's lease is written and
// judged with the database's clock, whatever the replicas' clocks say: a
// replica an hour behind still leases for two minutes from the database's
// now, and one an hour ahead does not take a timer another live replica
// holds.
func TestTimerLeaseOnTheDatabasesClock(t *testing.T) {
	pgtest.Server(t)
	url := pgtest.URL(t)
	a, b := open(t, url, postgres.Options{}), open(t, url, postgres.Options{})
	ctx := t.Context()
	real := time.Now().UTC().Truncate(time.Second)
	start := real.Add(-time.Hour)
	tm := meetingbot.Snooze{User: "U1", Mode: meetingbot.SnoozeAtStart, Reminder: "ev:10m:x", Subscription: "alice",
		Meeting: meetingbot.Meeting{ID: "ev", Start: start, End: start.Add(3 * time.Hour)}}.Timer(start)
	_, added, err := a.AddTimer(ctx, tm, start.Add(-time.Minute))
	require.NoError(t, err)
	require.True(t, added)

	behind := real.Add(-time.Hour + time.Minute)
	got, ok, err := a.TakeTimer(ctx, tm.Key, behind, 2*time.Minute)
	require.NoError(t, err)
	require.True(t, ok, "taken by a replica whose clock is an hour behind")
	if d := got.LeaseUntil.Sub(real.Add(2 * time.Minute)); d < -5*time.Second || d > 5*time.Second {
		t.Errorf("lease until %v, want two minutes from the database's now (about %v)", got.LeaseUntil, real.Add(2*time.Minute))
	}

	ahead := real.Add(time.Hour)
	_, ok, err = b.TakeTimer(ctx, tm.Key, ahead, 2*time.Minute)
	require.NoError(t, err)
	assert.False(t, ok, "taken by a replica whose clock is an hour ahead, from a live holder within its lease")
	due, next, _, err := b.NextTimers(ctx, ahead)
	require.NoError(t, err)
	assert.Empty(t, due, "due to a replica an hour ahead")
	if left := next.Sub(ahead); left < 100*time.Second || left > 2*time.Minute {
		t.Errorf("next wake %v after now, want the lease's two minutes on the database's clock", left)
	}
}

// TestMigration018GroupsSnoozesByMeeting: the snoozes pending when the
// replicas are upgraded take their meeting's group, as on SQLite.
func TestMigration018GroupsSnoozesByMeeting(t *testing.T) {
	pgtest.Server(t)
	url := pgtest.URL(t)
	s := open(t, url, postgres.Options{})
	storetest.RunSnoozeGroupMigration(t, s, func() storetest.TimerStore {
		require.NoError(t, s.Close())
		pgtest.Exec(t, url, `DELETE FROM migrations WHERE version = 18`)
		return open(t, url, postgres.Options{})
	})
}

// TestTimerOfAReplicaThatDiedMidFire: a replica killed while firing a
// timer (taken, its DM claimed in the ledger) holds both while its
// heartbeat is fresh or the timer's lease runs, whichever ends later, by
// the database's clock; then another replica takes the timer, and its
// claim of the DM is orphaned: it looks in Slack before sending again.
func TestTimerOfAReplicaThatDiedMidFire(t *testing.T) {
	pgtest.Server(t)
	heartbeat := postgres.LeaseTicks * tick
	for _, tt := range []struct {
		name  string
		lease time.Duration
	}{
		{"lease past the heartbeat", heartbeat + time.Minute},
		{"lease within the heartbeat", 10 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url := pgtest.URL(t)
			db := clock.NewFake(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)) // the database's clock
			a := open(t, url, postgres.Options{Interval: tick, Now: db.Now})
			b := open(t, url, postgres.Options{Interval: tick, Now: db.Now})
			ctx := t.Context()
			start := t0.Add(10 * time.Minute)
			s := meetingbot.Snooze{User: "U1", Mode: meetingbot.SnoozeAtStart, Reminder: "ev:10m:x", Subscription: "alice", Calendar: "alice",
				Meeting: meetingbot.Meeting{ID: "ev", Start: start, End: start.Add(time.Hour)}}
			tm := s.Timer(start)
			_, _, err := a.AddTimer(ctx, tm, t0)
			require.NoError(t, err)
			_, ok, err := a.TakeTimer(ctx, tm.Key, start, tt.lease)
			require.NoError(t, err)
			require.True(t, ok, "taken by a")
			dm := meetingbot.Entry{Subscription: meetingbot.SnoozeSubscription("U1"), Key: tm.Key, EventID: "ev", Start: start, TriggerAt: start}
			st, _, err := a.Claim(ctx, dm, start, start.Add(tt.lease)) // the handler leases both alike
			require.NoError(t, err)
			require.Equal(t, meetingbot.Claimed, st, "a claims the DM")
			postgres.Crash(a) // mid-send

			now := start.Add(time.Second) // b's clock; the database's decides
			takes := func() bool {
				_, ok, err := b.TakeTimer(ctx, tm.Key, now, 2*time.Minute)
				require.NoError(t, err)
				return ok
			}
			assert.False(t, takes(), "taken while a's heartbeat is fresh")
			due, next, _, err := b.NextTimers(ctx, now)
			require.NoError(t, err)
			assert.Empty(t, due, "due while a holds it")
			if left := next.Sub(now); left <= 0 || left > tt.lease {
				t.Errorf("NextTimers' next wake in %v, want within the lease's %v", left, tt.lease)
			}
			end := max(heartbeat, tt.lease)
			db.Advance(end - time.Second)
			assert.False(t, takes(), "taken a second before a's heartbeat and lease are both over")
			db.Advance(2 * time.Second)
			require.True(t, takes(), "taken once a's heartbeat and lease are both over")
			got, _, err := b.Timer(ctx, tm.Key)
			require.NoError(t, err)
			assert.Equal(t, b.Owner(), got.Holder)
			assert.Equal(t, 2, got.Attempts, "attempts: a's and b's")
			assert.Equal(t, meetingbot.Orphaned, claimAt(t, b, dm, now), "b's claim of the DM a was sending: look in Slack first")
		})
	}
}
