package postgres_test

import (
	"context"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/storage/postgres"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 30, 8, 50, 0, 0, time.UTC)

func entry(key string) meetingbot.Entry {
	start := t0.Add(10 * time.Minute)
	return meetingbot.Entry{Subscription: "alice", Key: key, EventID: "ev", Offset: 10 * time.Minute, Start: start, TriggerAt: t0}
}

func claimAt(t *testing.T, s *postgres.Store, e meetingbot.Entry, now time.Time) meetingbot.ClaimStatus {
	t.Helper()
	st, _, err := s.Claim(t.Context(), e, now, now.Add(2*time.Minute))
	require.NoError(t, err)
	return st
}

// A killed replica's claim stays its own while its heartbeat is fresh or
// the claim's lease runs, whichever ends later, both by the database's
// clock: the lease covers the send it guards, so a replica only cut off
// from the database cannot be sending still when another takes the key.
func TestKilledReplicasClaimWaitsForItsHeartbeatAndItsLease(t *testing.T) {
	url := pgtest.URL(t)
	db := clock.NewFake(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)) // the database's clock
	a := open(t, url, postgres.Options{Interval: tick, Now: db.Now})
	b := open(t, url, postgres.Options{Interval: tick, Now: db.Now})
	e := entry("k1")
	st, _, err := a.Claim(t.Context(), e, t0, t0.Add(postgres.LeaseTicks*tick+time.Minute)) // a lease past the heartbeat
	require.NoError(t, err)
	require.Equal(t, meetingbot.Claimed, st)
	postgres.Crash(a)

	assert.Equal(t, meetingbot.Busy, claimAt(t, b, e, t0.Add(time.Hour)), "heartbeat fresh, lease running")
	db.Advance(postgres.LeaseTicks*tick + time.Second)
	assert.Equal(t, meetingbot.Busy, claimAt(t, b, e, t0.Add(time.Hour)), "heartbeat over, lease running")
	orphans, err := b.Orphans(t.Context(), "", t0.Add(time.Hour))
	require.NoError(t, err)
	assert.Empty(t, orphans, "Orphans while the lease runs")
	db.Advance(time.Minute)
	orphans, err = b.Orphans(t.Context(), "", t0)
	require.NoError(t, err)
	assert.Len(t, orphans, 1, "Orphans once both are over")
	assert.Equal(t, meetingbot.Orphaned, claimAt(t, b, e, t0), "heartbeat over, lease over: look in Slack first")
}

// Stalled names another replica's claim in flight only once that replica
// has missed its heartbeat, with the instant the claim may be free on the
// caller's clock: a live replica's claims never show, nor the caller's
// own, nor one released (whoever sweeps it looks it up).
func TestStalledNamesAClaimOfAReplicaThatMissedItsHeartbeat(t *testing.T) {
	url := pgtest.URL(t)
	db := clock.NewFake(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)) // the database's clock
	a := open(t, url, postgres.Options{Interval: tick, Now: db.Now})
	b := open(t, url, postgres.Options{Interval: tick, Now: db.Now})
	e, released, bs := entry("k1"), entry("k2"), entry("k3")
	st, _, err := a.Claim(t.Context(), e, t0, t0.Add(tick)) // a lease of an interval, as the bot's
	require.NoError(t, err)
	require.Equal(t, meetingbot.Claimed, st)
	require.Equal(t, meetingbot.Claimed, claimAt(t, a, released, t0))
	require.NoError(t, a.Release(t.Context(), released, "send unconfirmed"))
	require.Equal(t, meetingbot.Claimed, claimAt(t, b, bs, t0))
	stalled := func(s *postgres.Store, now time.Time) []meetingbot.Entry {
		t.Helper()
		got, err := s.Stalled(t.Context(), tick, now)
		require.NoError(t, err)
		return got
	}

	assert.Empty(t, stalled(b, t0), "a beat just now: its claim is held for LeaseTicks intervals")
	assert.Empty(t, stalled(a, t0), "a replica's own claims, and a released one")
	postgres.Crash(a)
	db.Advance(tick + tick/2) // a beat due half an interval ago
	assert.Empty(t, stalled(b, t0), "its heartbeat and the claim's lease run past the next round")

	db.Advance(tick) // half an interval of its heartbeat left, and the claim's lease over
	got := stalled(b, t0)
	require.Len(t, got, 1, "a replica a whole beat late, with a send in flight")
	assert.Equal(t, e.Key, got[0].Key)
	left := postgres.LeaseTicks*tick - (2*tick + tick/2)
	assert.WithinDuration(t, t0.Add(left), got[0].LeaseUntil, time.Millisecond, "free when its heartbeat ends, on the caller's clock")
	assert.Equal(t, meetingbot.Busy, claimAt(t, b, e, t0), "not free yet")

	db.Advance(time.Hour)
	got = stalled(b, t0)
	require.Len(t, got, 1, "its heartbeat over")
	assert.Equal(t, t0, got[0].LeaseUntil, "free now")
	assert.Equal(t, meetingbot.Orphaned, claimAt(t, b, e, t0))
	assert.Empty(t, stalled(b, t0), "taken over: the caller's own")
}

// Claim leases are written and judged on the database's clock, whatever
// the replicas' clocks say: a replica whose clock runs 50 minutes ahead
// writes the database's instants, and one whose clock runs 5 minutes
// ahead of that one's does not take its claim while the lease runs by the
// database's clock, though by its own the lease is long over (the send it
// guards could still be in flight: a duplicate).
func TestClaimLeasesAreOnTheDatabasesClock(t *testing.T) {
	url := pgtest.URL(t)
	dbStart := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	db := clock.NewFake(dbStart)
	a := open(t, url, postgres.Options{Interval: tick, Now: db.Now})
	b := open(t, url, postgres.Options{Interval: tick, Now: db.Now})
	e := entry("k1")
	aNow := dbStart.Add(50 * time.Minute) // a's clock
	lease := postgres.LeaseTicks*tick + 30*time.Second
	st, _, err := a.Claim(t.Context(), e, aNow, aNow.Add(lease))
	require.NoError(t, err)
	require.Equal(t, meetingbot.Claimed, st)
	got, err := b.Entries(t.Context(), e.Subscription, []string{e.Key})
	require.NoError(t, err)
	assert.Equal(t, dbStart, got[e.Key].ClaimedAt, "claimed_at: the database's now, not the replica's")
	assert.Equal(t, dbStart.Add(lease), got[e.Key].LeaseUntil, "lease_until: the database's now plus the lease")

	require.NoError(t, a.Renew(t.Context(), e, aNow.Add(lease+10*time.Second)))
	got, err = b.Entries(t.Context(), e.Subscription, []string{e.Key})
	require.NoError(t, err)
	assert.Equal(t, dbStart.Add(lease+10*time.Second), got[e.Key].LeaseUntil, "lease_until after Renew, on the database's clock")

	postgres.Crash(a) // its heartbeat stops; its send may go on
	db.Advance(postgres.LeaseTicks*tick + time.Second)
	bNow := aNow.Add(db.Now().Sub(dbStart) + 5*time.Minute) // b's clock, 5 minutes ahead of a's
	assert.Equal(t, meetingbot.Busy, claimAt(t, b, e, bNow), "a claim whose lease runs by the database's clock, taken by a replica 5 minutes ahead of its owner")
	orphans, err := b.Orphans(t.Context(), "", bNow)
	require.NoError(t, err)
	assert.Empty(t, orphans, "Orphans of a replica 5 minutes ahead while the lease runs")
	db.Advance(lease)
	assert.Equal(t, meetingbot.Orphaned, claimAt(t, b, e, bNow), "once the lease is over by the database's clock")
}

// The heartbeat keeps a running replica's claims its own for as long as
// it runs, past their leases, as SQLite's flock does; it stops with the
// process.
func TestHeartbeatKeepsARunningReplicasClaims(t *testing.T) {
	url := pgtest.URL(t)
	const interval = 100 * time.Millisecond // leases of 300ms
	a := open(t, url, postgres.Options{Interval: interval})
	b := open(t, url, postgres.Options{Interval: interval})
	e := entry("k1")
	st, _, err := a.Claim(t.Context(), e, t0, t0.Add(time.Millisecond)) // a lease over at once
	require.NoError(t, err)
	require.Equal(t, meetingbot.Claimed, st)
	time.Sleep(postgres.LeaseTicks*interval + 200*time.Millisecond)
	assert.Equal(t, meetingbot.Busy, claimAt(t, b, e, t0.Add(time.Hour)), "claim of a running replica, past its lease and past one heartbeat's span")
	postgres.Crash(a)
	time.Sleep(postgres.LeaseTicks*interval + 200*time.Millisecond)
	assert.Equal(t, meetingbot.Orphaned, claimAt(t, b, e, t0.Add(time.Hour)), "once its heartbeat has run out")
}

// The database ends a replica's connections (a restart, a failover, an
// administrator): the replica keeps its claims, and its next write goes
// through on a new connection.
func TestReplicaKeepsItsClaimsThroughLostConnections(t *testing.T) {
	base := pgtest.URL(t)
	u, err := url.Parse(base)
	require.NoError(t, err)
	q := u.Query()
	q.Set("application_name", q.Get("application_name")+"_a")
	u.RawQuery = q.Encode()
	a := open(t, u.String(), postgres.Options{})
	b := open(t, base, postgres.Options{})
	e := entry("k1")
	require.Equal(t, meetingbot.Claimed, claimAt(t, a, e, t0))

	require.Positive(t, pgtest.Terminate(t, u.String()), "connections of a ended")
	assert.Equal(t, meetingbot.Busy, claimAt(t, b, e, t0.Add(time.Minute)), "claim of a replica whose connections were ended")
	sent := e
	sent.Outcome, sent.Channel, sent.MessageTS = meetingbot.Sent, "C1", "1.1"
	require.NoError(t, a.Record(t.Context(), sent, t0.Add(time.Minute)), "Record after the connections were ended")
	assert.Equal(t, meetingbot.Done, claimAt(t, b, e, t0.Add(2*time.Minute)))
}

// After the database ends every connection, at most one read fails: the
// store drops the pool's other connections, dead too, at the first sign.
func TestOneReadFailsAfterTheDatabaseEndsEveryConnection(t *testing.T) {
	base := pgtest.URL(t)
	s := open(t, base, postgres.Options{})
	var wg sync.WaitGroup
	for range 8 { // several connections in the pool
		wg.Go(func() { _, _ = s.Cursors(t.Context()) })
	}
	wg.Wait()
	require.Positive(t, pgtest.Terminate(t, base))
	_, _, first := s.Cursor(t.Context(), "alice")
	_, _, err := s.Cursor(t.Context(), "alice")
	assert.NoError(t, err, "Cursor after the one that met a dead connection (that one: %v)", first)
	_, err = s.Orphans(t.Context(), "", t0)
	assert.NoError(t, err, "Orphans")
}

// A replica's Hold lasts while its heartbeat beats and ends, with
// ErrHeartbeatLapsed, once it stops: before the heartbeat's span is over,
// when the others could take its claims.
func TestHoldEndsBeforeTheHeartbeatLapses(t *testing.T) {
	url := pgtest.URL(t)
	const interval = time.Second // a span of 3s
	a := open(t, url, postgres.Options{Interval: interval})
	held, release := a.Hold(t.Context())
	defer release()
	select {
	case <-held.Done():
		t.Fatalf("Hold ended while the heartbeat beats: %v", context.Cause(held))
	case <-time.After(postgres.LeaseTicks*interval - interval/2):
	}
	stopped := time.Now()
	postgres.Crash(a)
	select {
	case <-held.Done():
		assert.ErrorIs(t, context.Cause(held), postgres.ErrHeartbeatLapsed)
		assert.Less(t, time.Since(stopped), postgres.LeaseTicks*interval, "Hold ended after the heartbeat's span")
	case <-time.After(2 * postgres.LeaseTicks * interval):
		t.Fatal("Hold still on after the heartbeat stopped")
	}
}
