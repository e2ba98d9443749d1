package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
)

// testFollowing: a channel subscription keeps what it follows (changes
// since an instant, a daily and a weekly agenda in a zone) through a
// restart, may have no offsets when it follows something, and a personal
// one follows nothing.
func testFollowing(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t)
	sub := eng()
	sub.Offsets = nil
	sub.Following = meetingbot.Following{ChangesSince: created.Add(time.Minute), Daily: "09:00", Weekly: "mon 09:00", Zone: "Europe/Berlin"}
	got, added, err := s.AddSlackSubscription(ctx, sub)
	require.NoError(t, err)
	assert.True(t, added, "AddSlackSubscription(changes and agendas, offsets none) added")
	assert.Equal(t, sub.Following, got.Following, "what it follows")
	assert.Empty(t, got.Offsets, "offsets none")

	// Following nothing and reminding of nothing is refused.
	ok, err := s.SetSlackSubscriptionFollowing(ctx, sub.ID, nil, meetingbot.Following{})
	assert.True(t, errors.Is(err, meetingbot.ErrInvalid), "SetSlackSubscriptionFollowing(none, nothing) = %v, %v, want ErrInvalid", ok, err)
	p := alice()
	p.ChangesSince = created
	_, _, err = s.AddSlackSubscription(ctx, p)
	assert.True(t, errors.Is(err, meetingbot.ErrInvalid), "a personal subscription following changes: %v, want ErrInvalid", err)

	ok, err = s.SetSlackSubscriptionFollowing(ctx, sub.ID, []time.Duration{10 * time.Minute}, meetingbot.Following{Daily: "08:30", Zone: "America/New_York"})
	require.NoError(t, err)
	assert.True(t, ok, "SetSlackSubscriptionFollowing of a channel subscription")
	require.NoError(t, s.Close())

	s = open(t) // a restart
	got, ok, err = s.SlackSubscription(ctx, sub.ID)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, meetingbot.Following{Daily: "08:30", Zone: "America/New_York"}, got.Following, "what it follows after a restart")
	assert.Equal(t, []time.Duration{10 * time.Minute}, got.Offsets)
}

// testFeedSeen: what a channel was told of its calendar's events is kept
// from its first reading, shared by every process on the database, and
// forgotten whole when it stops following.
func testFeedSeen(t *testing.T, open Opener) {
	ctx := t.Context()
	s, other := open(t), open(t)
	const sub = "feed:slack:team=C0ENG0001"
	seen, primed, err := s.FeedSeen(ctx, sub)
	require.NoError(t, err)
	assert.Empty(t, seen)
	assert.True(t, primed.IsZero(), "no first reading yet")
	err = s.PutFeedSeen(ctx, sub, time.Time{}, []meetingbot.Meeting{instance("a", created)}, nil)
	assert.True(t, errors.Is(err, meetingbot.ErrInvalid), "PutFeedSeen before a first reading = %v, want ErrInvalid", err)

	a, b := instance("a", created.Add(time.Hour)), instance("b", created.Add(2*time.Hour))
	a.Location, a.Creator = "Room 1", "Bob"
	require.NoError(t, s.PutFeedSeen(ctx, sub, created, []meetingbot.Meeting{a, b}, nil))
	moved := b
	moved.Start, moved.End = b.Start.Add(time.Hour), b.End.Add(time.Hour)
	require.NoError(t, other.PutFeedSeen(ctx, sub, created.Add(time.Hour), []meetingbot.Meeting{moved}, []string{"a"}))

	seen, primed, err = s.FeedSeen(ctx, sub)
	require.NoError(t, err)
	assert.True(t, primed.Equal(created), "FeedSeen primed = %v, want the first reading's %v", primed, created)
	require.Len(t, seen, 1)
	assert.True(t, seen["b"].Start.Equal(moved.Start), "b as last told: start %v, want %v", seen["b"].Start, moved.Start)

	// A notice being posted is kept, by event, until its outcome is known.
	require.NoError(t, s.PutFeedPending(ctx, sub, []meetingbot.FeedPending{{Event: "b", Key: "feed:b:1", Now: moved}, {Event: "a", Key: "feed:a:2"}}))
	require.NoError(t, other.PutFeedPending(ctx, sub, []meetingbot.FeedPending{{Event: "b", Key: "feed:b:3", Now: b}}))
	pending, err := s.FeedPending(ctx, sub)
	require.NoError(t, err)
	require.Len(t, pending, 2)
	assert.Equal(t, "feed:b:3", pending["b"].Key, "the last notice of an event replaces the one before")
	assert.True(t, pending["b"].Now.Start.Equal(b.Start))
	assert.Empty(t, pending["a"].Now.ID, "a cancellation tells no state")
	require.NoError(t, other.DropFeedPending(ctx, sub, []string{"a"}))
	pending, err = s.FeedPending(ctx, sub)
	require.NoError(t, err)
	assert.Len(t, pending, 1)

	require.NoError(t, other.ForgetFeed(ctx, sub))
	pending, err = s.FeedPending(ctx, sub)
	require.NoError(t, err)
	assert.Empty(t, pending, "forgotten with the rest")
	seen, primed, err = s.FeedSeen(ctx, sub)
	require.NoError(t, err)
	assert.Empty(t, seen)
	assert.True(t, primed.IsZero(), "forgotten: no first reading")
}
