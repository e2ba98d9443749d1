package storetest

import (
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var mirrorNow = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

// instance is a meeting of the mirror starting at start.
func instance(id string, start time.Time) meetingbot.Meeting {
	return meetingbot.Meeting{
		ID: id, Series: "standup", RecurringEventID: "standup_R20261101T090000", Instance: id + "-key", Title: "Standup <&>",
		Start: start, End: start.Add(30 * time.Minute),
		HTMLLink: "https://calendar.example/" + id, JoinURL: "https://meet.example/abc",
		Organizer: "alice@example.com", Updated: mirrorNow.Add(-time.Hour), Private: true,
	}
}

func idsOf(ms []meetingbot.Meeting) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// A full sync replaces the mirror, an incremental one changes and removes
// instances, each with its token; another process (a restart) finds both.
func testMirror(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t)
	_, ok, err := s.CalendarSync(ctx, "alice")
	require.NoError(t, err)
	assert.False(t, ok, "CalendarSync(alice) before any sync: found")

	st := meetingbot.CalendarSync{CalendarID: "alice", Token: "t1", From: mirrorNow.Add(-25 * time.Hour),
		Horizon: mirrorNow.Add(8 * 24 * time.Hour), FullAt: mirrorNow, SyncedAt: mirrorNow}
	a, b, c := instance("a", mirrorNow.Add(time.Hour)), instance("b", mirrorNow.Add(2*time.Hour)), instance("c", mirrorNow.Add(3*time.Hour))
	require.NoError(t, s.ReplaceMirror(ctx, st, []meetingbot.Meeting{c, a, b}))
	require.NoError(t, s.ReplaceMirror(ctx, meetingbot.CalendarSync{CalendarID: "bob", Token: "x", From: mirrorNow, Horizon: mirrorNow.Add(time.Hour)},
		[]meetingbot.Meeting{instance("a", mirrorNow.Add(time.Minute))}))

	got, err := s.Mirrored(ctx, "alice", mirrorNow, mirrorNow.Add(24*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, idsOf(got), "Mirrored(alice) after a full sync")
	assert.Equal(t, a, got[0], "a mirrored meeting comes back whole")

	// (from, to]: b starts at the upper bound, a at the lower one.
	got, err = s.Mirrored(ctx, "alice", a.Start, b.Start)
	require.NoError(t, err)
	assert.Equal(t, []string{"b"}, idsOf(got), "Mirrored(alice, (a's start, b's start])")

	moved := b
	moved.Start, moved.Title = mirrorNow.Add(30*time.Minute), "moved"
	d := instance("d", mirrorNow.Add(4*time.Hour))
	st2 := st
	st2.Token, st2.SyncedAt = "t2", mirrorNow.Add(time.Minute)
	require.NoError(t, s.UpdateMirror(ctx, st2, []meetingbot.Meeting{moved, d}, []string{"c", "never-there"}))

	other := open(t) // another process, or the same after a restart
	got, err = other.Mirrored(ctx, "alice", mirrorNow, mirrorNow.Add(24*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "a", "d"}, idsOf(got), "Mirrored(alice) after an incremental sync")
	assert.Equal(t, "moved", got[0].Title)
	gotSt, ok, err := other.CalendarSync(ctx, "alice")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, st2, gotSt, "CalendarSync(alice) after an incremental sync")

	// A second full sync replaces what was there.
	require.NoError(t, other.ReplaceMirror(ctx, st, []meetingbot.Meeting{c}))
	got, err = s.Mirrored(ctx, "alice", mirrorNow, mirrorNow.Add(24*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, []string{"c"}, idsOf(got), "Mirrored(alice) after a second full sync")

	cals, err := s.MirroredCalendars(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"alice", "bob"}, cals, "MirroredCalendars")
}

// ForgetMirror drops one calendar's token and instances, nothing else.
func testForgetMirror(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t)
	for _, cal := range []string{"alice", "bob"} {
		require.NoError(t, s.ReplaceMirror(ctx, meetingbot.CalendarSync{CalendarID: cal, Token: "t", From: mirrorNow, Horizon: mirrorNow.Add(time.Hour)},
			[]meetingbot.Meeting{instance("a", mirrorNow.Add(time.Minute))}))
	}
	require.NoError(t, s.ForgetMirror(ctx, "alice"))
	require.NoError(t, s.ForgetMirror(ctx, "carol"), "ForgetMirror of a calendar never synced")

	_, ok, err := s.CalendarSync(ctx, "alice")
	require.NoError(t, err)
	assert.False(t, ok, "CalendarSync(alice) after ForgetMirror: found")
	got, err := s.Mirrored(ctx, "alice", mirrorNow, mirrorNow.Add(time.Hour))
	require.NoError(t, err)
	assert.Empty(t, got, "Mirrored(alice) after ForgetMirror")
	got, err = s.Mirrored(ctx, "bob", mirrorNow, mirrorNow.Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, idsOf(got), "Mirrored(bob) after ForgetMirror(alice)")
	cals, err := s.MirroredCalendars(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"bob"}, cals, "MirroredCalendars after ForgetMirror(alice)")
}

// Channels outlive the process that opened them, so a restart verifies
// their notifications, renews them or stops them.
func testChannels(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t)
	got, err := s.Channels(ctx)
	require.NoError(t, err)
	assert.Empty(t, got, "Channels of a new store")

	old := meetingbot.PushChannel{ID: "ch-1", CalendarID: "alice", Token: "secret-1", ResourceID: "res-a", Expiration: mirrorNow.Add(time.Hour)}
	renewed := meetingbot.PushChannel{ID: "ch-2", CalendarID: "alice", Token: "secret-2", ResourceID: "res-a", Expiration: mirrorNow.Add(7 * 24 * time.Hour)}
	bob := meetingbot.PushChannel{ID: "ch-3", CalendarID: "bob as U2", Opener: "bob as U2", Token: "secret-3", ResourceID: "res-b", Expiration: mirrorNow.Add(2 * time.Hour)}
	for _, ch := range []meetingbot.PushChannel{renewed, bob, old} {
		require.NoError(t, s.PutChannel(ctx, ch))
	}
	require.NoError(t, s.PutChannel(ctx, old), "PutChannel twice")

	restarted := open(t)
	got, err = restarted.Channels(ctx)
	require.NoError(t, err)
	assert.Equal(t, []meetingbot.PushChannel{old, renewed, bob}, got, "Channels after a restart")

	require.NoError(t, restarted.DeleteChannel(ctx, "ch-1"))
	require.NoError(t, restarted.DeleteChannel(ctx, "ch-1"), "DeleteChannel twice")
	got, err = s.Channels(ctx)
	require.NoError(t, err)
	assert.Equal(t, []meetingbot.PushChannel{renewed, bob}, got, "Channels after DeleteChannel(ch-1)")
}
