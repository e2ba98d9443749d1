package storetest

import (
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// send claims and records e as sent at now.
func send(t *testing.T, s Store, e meetingbot.Entry, now time.Time) meetingbot.Entry {
	t.Helper()
	_, _, err := s.Claim(t.Context(), e, now, now.Add(2*time.Minute))
	require.NoError(t, err)
	e.Outcome, e.Channel, e.MessageTS = meetingbot.Sent, "C1", "1.2"
	require.NoError(t, s.Record(t.Context(), e, now))
	return e
}

func keysOf(es []meetingbot.Entry) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.Key)
	}
	return out
}

// Followed lists the sent reminders whose meeting, as their message names
// it, is still ahead: by the new start of a message edited to say the
// meeting moved, or else by the start they were sent for.
func testFollowed(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t)
	now := time.Date(2026, 11, 30, 8, 50, 0, 0, time.UTC)
	ahead := send(t, s, entry("ahead", now.Add(10*time.Minute)), now)
	send(t, s, entry("started", now.Add(-time.Minute)), now.Add(-11*time.Minute))
	moved := send(t, s, entry("moved", now.Add(-time.Minute)), now.Add(-11*time.Minute))
	_, _, err := s.Claim(ctx, entry("sending", now.Add(5*time.Minute)), now, now.Add(time.Minute))
	require.NoError(t, err)
	other := entry("bob's", now.Add(10*time.Minute))
	other.Subscription = "bob"
	send(t, s, other, now)

	st, _, err := s.ClaimEdit(ctx, moved, now, now.Add(2*time.Minute))
	require.NoError(t, err)
	require.Equal(t, meetingbot.Claimed, st)
	moved.Edit = meetingbot.Edit{Kind: meetingbot.EditMoved, MovedTo: now.Add(time.Hour), Count: 1, At: now}
	require.NoError(t, s.RecordEdit(ctx, moved))
	earlier := send(t, s, entry("moved earlier", now.Add(10*time.Minute)), now)
	_, _, err = s.ClaimEdit(ctx, earlier, now, now.Add(2*time.Minute))
	require.NoError(t, err)
	earlier.Edit = meetingbot.Edit{Kind: meetingbot.EditMoved, MovedTo: now.Add(-time.Minute), Count: 1, At: now}
	require.NoError(t, s.RecordEdit(ctx, earlier))

	got, err := s.Followed(ctx, "alice", now)
	require.NoError(t, err)
	assert.Equal(t, []string{"moved", "ahead"}, keysOf(got), "Followed(alice, 08:50)")
	assert.Equal(t, meetingbot.Edit{Kind: meetingbot.EditMoved, MovedTo: now.Add(time.Hour), Count: 1, At: now}, got[0].Edit)
	assert.Equal(t, ahead.MessageTS, got[1].MessageTS)

	got, err = s.Followed(ctx, "alice", now.Add(time.Hour))
	require.NoError(t, err)
	assert.Empty(t, keysOf(got), "Followed(alice, 09:50): every meeting named has started")
}

// An edit is claimed like a send: one process at a time, a closed
// process's claim free at once, and a claim lost is not recorded over. A
// permanent failure ends the edits of that message for good.
func testEditClaimLifecycle(t *testing.T, open Opener) {
	ctx := t.Context()
	a, b := open(t), open(t)
	now := time.Date(2026, 11, 30, 8, 50, 0, 0, time.UTC)
	e := send(t, a, entry("k1", now.Add(10*time.Minute)), now)

	claim := func(s Store, at time.Time) (meetingbot.ClaimStatus, meetingbot.Entry) {
		t.Helper()
		st, cur, err := s.ClaimEdit(ctx, e, at, at.Add(2*time.Minute))
		require.NoError(t, err)
		return st, cur
	}
	st, cur := claim(a, now)
	require.Equal(t, meetingbot.Claimed, st, "first claim")
	assert.Equal(t, meetingbot.NotEdited, cur.Edit.Kind)
	st, _ = claim(b, now.Add(5*time.Minute))
	assert.Equal(t, meetingbot.Busy, st, "claim of a live owner, past its lease")

	moved := cur
	moved.Edit = meetingbot.Edit{Kind: meetingbot.EditMoved, MovedTo: now.Add(time.Hour), Count: 1, At: now}
	assert.ErrorIs(t, b.RecordEdit(ctx, moved), meetingbot.ErrClaimLost, "record by another process")
	require.NoError(t, a.RecordEdit(ctx, moved), "record by the owner")
	assert.ErrorIs(t, a.RecordEdit(ctx, moved), meetingbot.ErrClaimLost, "record twice")

	st, cur = claim(a, now.Add(time.Minute))
	require.Equal(t, meetingbot.Claimed, st)
	assert.Equal(t, moved.Edit.Kind, cur.Edit.Kind, "the claim returns the message as recorded")
	assert.Equal(t, moved.Edit.MovedTo, cur.Edit.MovedTo)
	assert.Equal(t, a.Owner(), cur.Edit.Owner, "and its claim")
	require.NoError(t, a.Close()) // dies holding the claim
	st, cur = claim(b, now.Add(time.Minute))
	require.Equal(t, meetingbot.Claimed, st, "a dead owner's claim is free at once")

	gone := cur
	gone.Edit.Code, gone.Edit.Reason = meetingbot.ReasonPermanent, "message_not_found"
	require.NoError(t, b.RecordEdit(ctx, gone))
	st, cur = claim(b, now.Add(2*time.Minute))
	assert.Equal(t, meetingbot.Done, st, "a message whose edits were given up")
	assert.Equal(t, meetingbot.EditMoved, cur.Edit.Kind, "what it said before is kept")
	assert.Equal(t, now.Add(time.Hour), cur.Edit.MovedTo)

	st, _, err := b.ClaimEdit(ctx, entry("unknown", now), now, now.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, meetingbot.Done, st, "an entry not in the ledger")
	_, _, err = b.Claim(ctx, entry("sending", now), now, now.Add(time.Minute))
	require.NoError(t, err)
	st, _, err = b.ClaimEdit(ctx, entry("sending", now), now, now.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, meetingbot.Done, st, "an entry not sent")
}

// A reminder's message edited to say its calendar's owner declined the
// meeting is recorded so, and read back so by another process.
func testEditDeclined(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t)
	now := time.Date(2026, 11, 30, 8, 50, 0, 0, time.UTC)
	e := send(t, s, entry("k1", now.Add(10*time.Minute)), now)
	st, cur, err := s.ClaimEdit(ctx, e, now, now.Add(2*time.Minute))
	require.NoError(t, err)
	require.Equal(t, meetingbot.Claimed, st)
	cur.Edit = meetingbot.Edit{Kind: meetingbot.EditDeclined, Count: 1, At: now}
	require.NoError(t, s.RecordEdit(ctx, cur), "RecordEdit(declined)")
	got, err := open(t).Followed(ctx, "alice", now)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, meetingbot.EditDeclined, got[0].Edit.Kind, "the edit read back")
}
