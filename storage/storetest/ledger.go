package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// t0 is the instant the ledger tests claim at.
var t0 = time.Date(2026, 11, 30, 8, 50, 0, 0, time.UTC)

func entry(key string, start time.Time) meetingbot.Entry {
	return meetingbot.Entry{Subscription: "alice", Key: key, EventID: "ev-" + key, Offset: 10 * time.Minute,
		Start: start, TriggerAt: start.Add(-10 * time.Minute)}
}

func claim(t *testing.T, s Store, e meetingbot.Entry, at time.Time) meetingbot.ClaimStatus {
	t.Helper()
	st, _, err := s.Claim(t.Context(), e, at, at.Add(2*time.Minute))
	require.NoError(t, err, "Claim(%s)", e.Key)
	return st
}

func testClaimSettleLifecycle(t *testing.T, open Opener) {
	ctx := t.Context()
	a, b := open(t), open(t) // two processes on one database
	e := entry("k1", t0.Add(10*time.Minute))

	assert.Equal(t, meetingbot.Claimed, claim(t, a, e, t0), "first claim")
	assert.Equal(t, meetingbot.Busy, claim(t, b, e, t0.Add(time.Minute)), "claim held by a live owner")
	assert.Equal(t, meetingbot.Busy, claim(t, b, e, t0.Add(3*time.Minute)), "claim of a live owner past its lease")
	require.NoError(t, a.Renew(ctx, e, t0.Add(5*time.Minute)), "renew by the owner")
	assert.ErrorIs(t, b.Renew(ctx, e, t0.Add(5*time.Minute)), meetingbot.ErrClaimLost, "renew by another process")
	require.NoError(t, a.Release(ctx, e, "send unconfirmed: 503"), "release by the owner")
	assert.Equal(t, meetingbot.Orphaned, claim(t, b, e, t0.Add(3*time.Minute)), "a released claim: look first")

	lost := e
	lost.Outcome = meetingbot.Sent
	assert.ErrorIs(t, a.Record(ctx, lost, t0), meetingbot.ErrClaimLost, "settle by the old owner")
	assert.ErrorIs(t, a.Release(ctx, lost, "x"), meetingbot.ErrClaimLost, "release by the old owner")

	fail := e
	fail.Outcome, fail.Code, fail.Reason, fail.Retryable = meetingbot.Failed, meetingbot.ReasonTransient, "503", true
	require.NoError(t, b.Record(ctx, fail, t0))
	assert.Equal(t, meetingbot.Claimed, claim(t, b, e, t0.Add(4*time.Minute)), "retryable failure is claimable")

	sent := e
	sent.Outcome, sent.Channel, sent.MessageTS = meetingbot.Sent, "C1", "1.2"
	require.NoError(t, b.Record(ctx, sent, t0.Add(4*time.Minute)))
	st, prev, err := a.Claim(ctx, e, t0.Add(5*time.Minute), t0.Add(7*time.Minute))
	require.NoError(t, err)
	assert.Equal(t, meetingbot.Done, st, "settled key")
	assert.Equal(t, meetingbot.Sent, prev.Outcome, "Claim of a settled key returns it")

	got, err := b.Entries(ctx, "alice", []string{"k1", "missing"})
	require.NoError(t, err)
	require.Len(t, got, 1)
	k1 := got["k1"]
	assert.Equal(t, meetingbot.Sent, k1.Outcome)
	assert.Equal(t, 3, k1.Attempts)
	assert.Equal(t, "C1", k1.Channel)
	assert.Equal(t, "1.2", k1.MessageTS)
	assert.Equal(t, b.Owner(), k1.Owner, "the last claimant")
	assert.Equal(t, e.Start, k1.Start)
	assert.Equal(t, e.TriggerAt, k1.TriggerAt)
	assert.Equal(t, e.Offset, k1.Offset)
	assert.Equal(t, "ev-k1", k1.EventID)
	assert.Equal(t, t0.Add(4*time.Minute), k1.RecordedAt)
	if !ownClock(b) {
		assert.Equal(t, t0.Add(4*time.Minute), k1.ClaimedAt, "the last claim's instant")
	}
	assert.True(t, k1.LeaseUntil.IsZero(), "a settled entry has no lease, got %v", k1.LeaseUntil)
}

// A send that ended without an answer is released with no owner: the
// next claim, by anyone, gets Orphaned and looks in Slack first.
func testReleasedClaim(t *testing.T, open Opener) {
	ctx := t.Context()
	a, b := open(t), open(t)
	e := entry("k1", t0.Add(10*time.Minute))
	require.Equal(t, meetingbot.Claimed, claim(t, a, e, t0))
	require.NoError(t, a.Release(ctx, e, "send unconfirmed: timeout"))

	got, err := b.Entries(ctx, "alice", []string{"k1"})
	require.NoError(t, err)
	assert.Equal(t, meetingbot.Sending, got["k1"].Outcome)
	assert.Equal(t, "", got["k1"].Owner, "owner of a released claim")
	assert.Equal(t, meetingbot.ReasonUnconfirmed, got["k1"].Code)
	assert.Equal(t, "send unconfirmed: timeout", got["k1"].Reason)

	orphans, err := b.Orphans(ctx, "alice", t0)
	require.NoError(t, err)
	require.Len(t, orphans, 1, "a released claim is an orphan to everyone")
	orphans, err = b.Orphans(ctx, "bob", t0)
	require.NoError(t, err)
	assert.Empty(t, orphans, "Orphans(bob)")
	assert.Equal(t, meetingbot.Orphaned, claim(t, a, e, t0.Add(time.Second)), "the releaser's own next claim looks first too")
}

// A store's own claim in flight is free to it: the caller (the scheduler)
// knows whether it is still working on it.
func testOwnClaim(t *testing.T, open Opener) {
	a, b := open(t), open(t)
	e := entry("k1", t0.Add(10*time.Minute))
	require.Equal(t, meetingbot.Claimed, claim(t, a, e, t0))
	assert.Equal(t, meetingbot.Orphaned, claim(t, a, e, t0.Add(time.Second)), "Claim of one's own key in flight")
	assert.Equal(t, meetingbot.Busy, claim(t, b, e, t0.Add(time.Second)), "Claim by another process")
	orphans, err := a.Orphans(t.Context(), "", t0)
	require.NoError(t, err)
	assert.Len(t, orphans, 1, "a store's own claims are listed")
	orphans, err = b.Orphans(t.Context(), "", t0)
	require.NoError(t, err)
	assert.Empty(t, orphans, "another live process's claims are not")
}

// Closing a store is its process's end: the claims it left in flight are
// taken over at once, without waiting for their leases.
func testClosedOwner(t *testing.T, open Opener) {
	ctx := t.Context()
	a, b := open(t), open(t)
	e := entry("k1", t0.Add(10*time.Minute))
	require.Equal(t, meetingbot.Claimed, claim(t, a, e, t0))

	orphans, err := b.Orphans(ctx, "", t0)
	require.NoError(t, err)
	assert.Empty(t, orphans, "orphans while the owner lives")
	require.NoError(t, a.Close()) // the process ends; its lease has not run out

	orphans, err = b.Orphans(ctx, "", t0)
	require.NoError(t, err)
	assert.Len(t, orphans, 1, "orphans once the owner is gone")
	assert.Equal(t, meetingbot.Orphaned, claim(t, b, e, t0), "Claim of a gone owner's key")
}

// Several processes claiming one new key at the same instant: exactly one
// gets it.
func testOneClaimWins(t *testing.T, open Opener) {
	stores := []Store{open(t), open(t), open(t)}
	const perStore = 4
	for round := range 5 {
		e := entry(fmt.Sprintf("race-%d", round), t0.Add(10*time.Minute))
		var mu sync.Mutex
		got := map[meetingbot.ClaimStatus]int{}
		var wg sync.WaitGroup
		for _, s := range stores {
			for range perStore {
				wg.Go(func() {
					st, _, err := s.Claim(t.Context(), e, t0, t0.Add(2*time.Minute))
					if !assert.NoError(t, err, "Claim(%s)", e.Key) {
						return
					}
					mu.Lock()
					got[st]++
					mu.Unlock()
				})
			}
		}
		wg.Wait()
		// The winner's own process sees its claim as its own (Orphaned: the
		// scheduler keeps two paths of one process off one key); every
		// other process sees it Busy.
		assert.Equal(t, map[meetingbot.ClaimStatus]int{
			meetingbot.Claimed:  1,
			meetingbot.Orphaned: perStore - 1,
			meetingbot.Busy:     (len(stores) - 1) * perStore,
		}, got, "round %d: what the claims of one key at once found", round)
	}
}

func testFailures(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t)
	transient, permanent, skipped := entry("transient", t0.Add(10*time.Minute)), entry("permanent", t0.Add(10*time.Minute)), entry("skipped", t0.Add(-time.Minute))
	for _, e := range []meetingbot.Entry{transient, permanent, skipped} {
		require.Equal(t, meetingbot.Claimed, claim(t, s, e, t0))
	}
	transient.Outcome, transient.Code, transient.Reason, transient.Retryable = meetingbot.Failed, meetingbot.ReasonTransient, "slack: 503", true
	permanent.Outcome, permanent.Code, permanent.Reason = meetingbot.Failed, meetingbot.ReasonPermanent, "channel_not_found"
	skipped.Outcome, skipped.Code, skipped.Reason, skipped.Late = meetingbot.Skipped, meetingbot.ReasonStarted, "started", true
	for _, e := range []meetingbot.Entry{transient, permanent, skipped} {
		require.NoError(t, s.Record(ctx, e, t0), "Record(%s)", e.Key)
	}
	assert.Equal(t, meetingbot.Claimed, claim(t, s, transient, t0.Add(time.Minute)), "a retryable failure is claimed again")
	assert.Equal(t, meetingbot.Done, claim(t, s, permanent, t0.Add(time.Minute)), "a permanent failure is final")
	assert.Equal(t, meetingbot.Done, claim(t, s, skipped, t0.Add(time.Minute)), "a skipped reminder is final")

	got, err := s.Entries(ctx, "alice", []string{"transient", "permanent", "skipped"})
	require.NoError(t, err)
	assert.Equal(t, meetingbot.Sending, got["transient"].Outcome, "retried entry")
	assert.False(t, got["transient"].Retryable, "a new claim clears Retryable")
	assert.Equal(t, 2, got["transient"].Attempts)
	assert.Equal(t, meetingbot.ReasonPermanent, got["permanent"].Code)
	assert.Equal(t, "channel_not_found", got["permanent"].Reason)
	assert.Equal(t, meetingbot.ReasonStarted, got["skipped"].Code)
	assert.True(t, got["skipped"].Late, "Late is recorded")
}

func testOrphansCursorsPrune(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t)
	old := entry("old", t0.Add(-40*24*time.Hour))
	require.Equal(t, meetingbot.Claimed, claim(t, s, old, t0))
	old.Outcome = meetingbot.Sent
	require.NoError(t, s.Record(ctx, old, t0))
	require.Equal(t, meetingbot.Claimed, claim(t, s, entry("inflight", t0.Add(-40*24*time.Hour)), t0))
	require.Equal(t, meetingbot.Claimed, claim(t, s, entry("recent", t0.Add(time.Hour)), t0))

	orphans, err := s.Orphans(ctx, "", t0)
	require.NoError(t, err)
	require.Len(t, orphans, 2, "a store's own claims are listed: its caller knows which it is working on")

	n, err := s.Prune(ctx, t0.Add(-30*24*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "pruned rows: settled ones, not this store's claims")
	count, err := s.Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(2), count)

	require.NoError(t, s.AdvanceCursors(ctx, map[string]time.Time{"alice": t0, "bob": t0}))
	require.NoError(t, s.AdvanceCursors(ctx, map[string]time.Time{"alice": t0.Add(-time.Hour), "bob": t0.Add(time.Minute)}))
	require.NoError(t, s.AdvanceCursors(ctx, nil))
	cur, err := s.Cursors(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]time.Time{"alice": t0, "bob": t0.Add(time.Minute)}, cur, "cursors never move back")
}

// A claim left in flight by a process gone for a meeting long past (its
// subscription was removed, so nobody resolves it) is pruned like a
// settled row instead of being listed on every tick forever.
func testPruneDeadClaims(t *testing.T, open Opener) {
	ctx := t.Context()
	a, b := open(t), open(t)
	require.Equal(t, meetingbot.Claimed, claim(t, a, entry("old", t0.Add(-40*24*time.Hour)), t0))
	require.NoError(t, a.Close())

	orphans, err := b.Orphans(ctx, "", t0)
	require.NoError(t, err)
	require.Len(t, orphans, 1, "the gone process's claim is an orphan")
	n, err := b.Prune(ctx, t0.Add(-30*24*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "pruned rows")
	orphans, err = b.Orphans(ctx, "", t0)
	require.NoError(t, err)
	assert.Empty(t, orphans, "orphans after the prune")
}

func testCursor(t *testing.T, open Opener) {
	ctx := t.Context()
	a, b := open(t), open(t)
	_, ok, err := a.Cursor(ctx, "alice")
	require.NoError(t, err)
	assert.False(t, ok, "Cursor(alice) before any sweep")
	require.NoError(t, a.AdvanceCursors(ctx, map[string]time.Time{"alice": t0}))
	require.NoError(t, b.AdvanceCursors(ctx, map[string]time.Time{"alice": t0.Add(-time.Minute)})) // a slower process
	at, ok, err := b.Cursor(ctx, "alice")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, t0, at, "Cursor(alice): the further one wins")
	assert.Equal(t, time.UTC, at.Location())
}

// Entries answers for many keys at once (a sweep asks for every trigger of
// its window), leaving out the keys it does not know.
func testEntriesOfManyKeys(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t)
	var keys []string
	for i := range 1200 {
		key := fmt.Sprintf("k%04d", i)
		keys = append(keys, key)
		if i%3 == 0 {
			require.Equal(t, meetingbot.Claimed, claim(t, s, entry(key, t0.Add(time.Hour)), t0))
		}
	}
	got, err := s.Entries(ctx, "alice", keys)
	require.NoError(t, err)
	assert.Len(t, got, 400, "Entries of 1,200 keys, 400 known")
	assert.Contains(t, got, "k1197")
	assert.NotContains(t, got, "k1198")
	got, err = s.Entries(ctx, "bob", keys)
	require.NoError(t, err)
	assert.Empty(t, got, "Entries of another subscription")
	got, err = s.Entries(ctx, "alice", nil)
	require.NoError(t, err)
	assert.Empty(t, got, "Entries of no keys")
}

func testRange(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t)
	for _, c := range []struct {
		sub, key string
		trigger  time.Duration
	}{{"alice", "a2", 2 * time.Minute}, {"bob", "b1", time.Minute}, {"alice", "a1", time.Minute}, {"alice", "a0", 0}, {"alice", "a3", 3 * time.Minute}} {
		e := entry(c.key, t0.Add(c.trigger+10*time.Minute))
		e.Subscription = c.sub
		require.Equal(t, meetingbot.Claimed, claim(t, s, e, t0))
	}
	keys := func(es []meetingbot.Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Subscription+"/"+e.Key)
		}
		return out
	}
	all, err := s.Range(ctx, "", t0.Add(time.Minute), t0.Add(3*time.Minute))
	require.NoError(t, err)
	assert.Equal(t, []string{"alice/a1", "bob/b1", "alice/a2"}, keys(all), "Range(all, [+1m, +3m)) by trigger, subscription, key")
	alice, err := s.Range(ctx, "alice", t0, t0.Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, []string{"alice/a0", "alice/a1", "alice/a2", "alice/a3"}, keys(alice), "Range(alice)")
}

// Instants come back as the same instants, in UTC, to the millisecond,
// whatever zone they were given in.
func testInstants(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t)
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	start := time.Date(2026, 3, 29, 14, 0, 0, 123_456_789, zone)
	e := entry("k1", start)
	now := t0.Add(123*time.Millisecond + 999*time.Microsecond)
	require.Equal(t, meetingbot.Claimed, claim(t, s, e, now))
	got, err := s.Entries(ctx, "alice", []string{"k1"})
	require.NoError(t, err)
	k1 := got["k1"]
	instants := map[string]struct{ got, want time.Time }{
		"Start":      {k1.Start, start.UTC().Truncate(time.Millisecond)},
		"TriggerAt":  {k1.TriggerAt, start.Add(-10 * time.Minute).UTC().Truncate(time.Millisecond)},
		"ClaimedAt":  {k1.ClaimedAt, now.Truncate(time.Millisecond)},
		"LeaseUntil": {k1.LeaseUntil, now.Add(2 * time.Minute).Truncate(time.Millisecond)},
	}
	if ownClock(s) {
		// Instants of the store's clock: the lease's length is the
		// caller's, its start the store's.
		instants["ClaimedAt"] = struct{ got, want time.Time }{k1.ClaimedAt, k1.ClaimedAt.Truncate(time.Millisecond)}
		instants["LeaseUntil"] = struct{ got, want time.Time }{k1.LeaseUntil, k1.ClaimedAt.Add(2 * time.Minute)}
	}
	for name, c := range instants {
		assert.Equal(t, c.want, c.got, "%s", name)
		assert.Equal(t, time.UTC, c.got.Location(), "%s's zone", name)
	}
	assert.True(t, k1.RecordedAt.IsZero(), "RecordedAt of a claim in flight = %v, want zero", k1.RecordedAt)
}

// Each entry keeps its subscription's kind, which the engines tell their
// own claims by (a scheduler leaves an agenda's to the agenda), wherever
// it is read back.
func testEntryKinds(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t)
	kinds := map[string]meetingbot.Kind{"reminder": meetingbot.KindReminder, "status": meetingbot.KindStatus,
		"snooze": meetingbot.KindSnooze, "invite": meetingbot.KindInvite, "agenda": meetingbot.KindAgenda}
	for key, k := range kinds {
		e := entry(key, t0.Add(time.Hour))
		e.Subscription, e.Kind = "of-"+key, k
		require.Equal(t, meetingbot.Claimed, claim(t, s, e, t0))
	}
	orphans, err := s.Orphans(ctx, "", t0)
	require.NoError(t, err)
	require.Len(t, orphans, len(kinds))
	for _, e := range orphans {
		assert.Equal(t, kinds[e.Key], e.Kind, "Orphans: kind of %s", e.Key)
		got, err := s.Entries(ctx, e.Subscription, []string{e.Key})
		require.NoError(t, err)
		assert.Equal(t, kinds[e.Key], got[e.Key].Kind, "Entries: kind of %s", e.Key)
	}
	again := entry("agenda", t0.Add(time.Hour))
	again.Subscription = "of-agenda"
	_, prev, err := s.Claim(ctx, again, t0, t0.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, meetingbot.KindAgenda, prev.Kind, "Claim's previous entry")
}
