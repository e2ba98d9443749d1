package postgres_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
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
