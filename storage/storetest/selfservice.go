package storetest

import (
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var created = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

func alice() meetingbot.SlackSubscription {
	return meetingbot.SlackSubscription{
		ID: "slack:alice@example.com=U0ALICE01", Kind: meetingbot.SlackPersonal,
		CalendarID: "alice@example.com", Destination: "U0ALICE01",
		Offsets: []time.Duration{10 * time.Minute, time.Minute}, CreatedBy: "U0ALICE01", CreatedAt: created,
	}
}

func eng() meetingbot.SlackSubscription {
	return meetingbot.SlackSubscription{
		ID: "slack:team@group.calendar.google.com=C0ENG0001", Kind: meetingbot.SlackChannel,
		CalendarID: "team@group.calendar.google.com", Destination: "C0ENG0001",
		Offsets: []time.Duration{0}, CreatedBy: "U0ADMIN01", CreatedAt: created,
	}
}

func testSlackSubscriptionsSurviveRestart(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t)
	other := open(t) // another replica on the same database

	got, added, err := s.AddSlackSubscription(ctx, alice())
	require.NoError(t, err)
	assert.True(t, added, "AddSlackSubscription(alice) added")
	assert.Equal(t, []time.Duration{time.Minute, 10 * time.Minute}, got.Offsets, "offsets come back ascending")
	_, _, err = s.AddSlackSubscription(ctx, eng())
	require.NoError(t, err)
	_, err = s.MuteSeries(ctx, meetingbot.MutedSeries{Subscription: alice().ID, Series: "standup", Title: "Standup", MutedBy: "U0ALICE01", MutedAt: created})
	require.NoError(t, err)
	seen, err := other.SlackSubscriptions(ctx)
	require.NoError(t, err)
	assert.Len(t, seen, 2, "SlackSubscriptions from another process, at once")
	require.NoError(t, s.Close())

	s = open(t) // a restart
	subs, err := s.SlackSubscriptions(ctx)
	require.NoError(t, err)
	require.Len(t, subs, 2, "SlackSubscriptions after a restart")
	want := alice()
	want.Offsets = []time.Duration{time.Minute, 10 * time.Minute}
	want.Muted = []string{"standup"}
	assert.Equal(t, want, subs[0])
	assert.Equal(t, eng().ID, subs[1].ID)
	assert.Nil(t, subs[1].Muted, "a subscription without mutes")

	// Off: the scheduler's next sweep no longer sees it.
	removed, err := s.RemoveSlackSubscription(ctx, alice().ID)
	require.NoError(t, err)
	assert.True(t, removed)
	removed, err = s.RemoveSlackSubscription(ctx, alice().ID)
	require.NoError(t, err)
	assert.False(t, removed, "RemoveSlackSubscription twice")
	subs, err = s.SlackSubscriptions(ctx)
	require.NoError(t, err)
	require.Len(t, subs, 1, "SlackSubscriptions after off")

	// On again: the same ID, so the ledger keys already settled under it
	// are found and nothing is sent twice; the mute is still there.
	again := alice()
	again.CreatedAt = created.Add(time.Hour)
	got, added, err = s.AddSlackSubscription(ctx, again)
	require.NoError(t, err)
	assert.True(t, added)
	assert.Equal(t, alice().ID, got.ID)
	assert.Equal(t, []string{"standup"}, got.Muted, "a mute outlives off and on")
	assert.Equal(t, created.Add(time.Hour), got.CreatedAt)
}

func testAddSlackSubscriptionTwice(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t)
	_, _, err := s.AddSlackSubscription(ctx, eng())
	require.NoError(t, err)

	dup := eng()
	dup.Offsets = []time.Duration{time.Hour}
	dup.CreatedBy = "U0OTHER01"
	got, added, err := s.AddSlackSubscription(ctx, dup)
	require.NoError(t, err)
	assert.False(t, added, "AddSlackSubscription(duplicate) added")
	assert.Equal(t, []time.Duration{0}, got.Offsets, "the stored offsets stay")
	assert.Equal(t, "U0ADMIN01", got.CreatedBy, "the creator stays")

	// The same calendar and channel under another ID is refused: one
	// subscription, one ID.
	other := eng()
	other.ID = "another-id"
	_, _, err = s.AddSlackSubscription(ctx, other)
	assert.ErrorIs(t, err, meetingbot.ErrInvalid)

	ok, err := s.SetSlackSubscriptionOffsets(ctx, eng().ID, []time.Duration{5 * time.Minute, 0})
	require.NoError(t, err)
	assert.True(t, ok)
	got, _, err = s.SlackSubscription(ctx, eng().ID)
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{0, 5 * time.Minute}, got.Offsets)
	ok, err = s.SetSlackSubscriptionOffsets(ctx, "missing", []time.Duration{0})
	require.NoError(t, err)
	assert.False(t, ok, "SetSlackSubscriptionOffsets(missing)")
	_, err = s.SetSlackSubscriptionOffsets(ctx, eng().ID, nil)
	assert.ErrorIs(t, err, meetingbot.ErrInvalid, "SetSlackSubscriptionOffsets(no offsets)")
	_, found, err := s.SlackSubscription(ctx, "missing")
	require.NoError(t, err)
	assert.False(t, found, "SlackSubscription(missing)")

	to, err := s.SlackSubscriptionsTo(ctx, "C0ENG0001")
	require.NoError(t, err)
	assert.Len(t, to, 1, "SlackSubscriptionsTo(C0ENG0001)")
	to, err = s.SlackSubscriptionsTo(ctx, "C0OTHER01")
	require.NoError(t, err)
	assert.Empty(t, to, "SlackSubscriptionsTo(C0OTHER01)")
}

func testSlackWritesRefuse(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t)
	for name, mutate := range map[string]func(*meetingbot.SlackSubscription){
		"no ID":             func(sub *meetingbot.SlackSubscription) { sub.ID = "" },
		"no calendar":       func(sub *meetingbot.SlackSubscription) { sub.CalendarID = "" },
		"no destination":    func(sub *meetingbot.SlackSubscription) { sub.Destination = "" },
		"unknown kind":      func(sub *meetingbot.SlackSubscription) { sub.Kind = "group" },
		"no offsets":        func(sub *meetingbot.SlackSubscription) { sub.Offsets = nil },
		"negative offset":   func(sub *meetingbot.SlackSubscription) { sub.Offsets = []time.Duration{-time.Minute} },
		"fractional offset": func(sub *meetingbot.SlackSubscription) { sub.Offsets = []time.Duration{1500 * time.Millisecond} },
	} {
		sub := alice()
		mutate(&sub)
		_, _, err := s.AddSlackSubscription(ctx, sub)
		assert.ErrorIs(t, err, meetingbot.ErrInvalid, "AddSlackSubscription(%s)", name)
	}
	subs, err := s.SlackSubscriptions(ctx)
	require.NoError(t, err)
	assert.Empty(t, subs, "nothing stored")
	_, err = s.MuteSeries(ctx, meetingbot.MutedSeries{Subscription: eng().ID})
	assert.ErrorIs(t, err, meetingbot.ErrInvalid, "MuteSeries(no series)")
}

func testMuteAndUnmute(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t)
	_, _, err := s.AddSlackSubscription(ctx, eng())
	require.NoError(t, err)
	m := meetingbot.MutedSeries{Subscription: eng().ID, Series: "retro", Title: "Retro", MutedBy: "U0ADMIN01", MutedAt: created}
	added, err := s.MuteSeries(ctx, m)
	require.NoError(t, err)
	assert.True(t, added)
	added, err = s.MuteSeries(ctx, m)
	require.NoError(t, err)
	assert.False(t, added, "MuteSeries twice")
	later := meetingbot.MutedSeries{Subscription: eng().ID, Series: "all-hands", Title: "All hands", MutedBy: "U0ADMIN01", MutedAt: created.Add(time.Minute)}
	_, err = s.MuteSeries(ctx, later)
	require.NoError(t, err)

	muted, err := s.MutedSeriesOf(ctx, eng().ID)
	require.NoError(t, err)
	assert.Equal(t, []meetingbot.MutedSeries{m, later}, muted, "MutedSeriesOf, oldest first")
	sub, _, err := s.SlackSubscription(ctx, eng().ID)
	require.NoError(t, err)
	assert.Equal(t, []string{"all-hands", "retro"}, sub.Muted, "a subscription's muted series, sorted")

	removed, err := s.UnmuteSeries(ctx, eng().ID, "retro")
	require.NoError(t, err)
	assert.True(t, removed)
	removed, err = s.UnmuteSeries(ctx, eng().ID, "retro")
	require.NoError(t, err)
	assert.False(t, removed, "UnmuteSeries twice")
	sub, _, err = s.SlackSubscription(ctx, eng().ID)
	require.NoError(t, err)
	assert.Equal(t, []string{"all-hands"}, sub.Muted)
}

func testSlackSettings(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t)
	set, ok, err := s.SlackSettingsOf(ctx, "U0ALICE01")
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, meetingbot.SlackSettings{UserID: "U0ALICE01"}, set, "no settings yet")

	want := meetingbot.SlackSettings{UserID: "U0ALICE01", Offsets: []time.Duration{0, 5 * time.Minute}, Agenda: "08:30", TZ: "Europe/Berlin", UpdatedAt: created}
	require.NoError(t, s.PutSlackSettings(ctx, want))
	set, ok, err = s.SlackSettingsOf(ctx, "U0ALICE01")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, want, set)

	// Back to the default offsets and no agenda.
	want = meetingbot.SlackSettings{UserID: "U0ALICE01", TZ: "Europe/Berlin", UpdatedAt: created.Add(time.Minute)}
	require.NoError(t, s.PutSlackSettings(ctx, want))
	set, _, err = s.SlackSettingsOf(ctx, "U0ALICE01")
	require.NoError(t, err)
	assert.Equal(t, want, set)
	assert.Nil(t, set.Offsets, "nil offsets mean the default")

	assert.ErrorIs(t, s.PutSlackSettings(ctx, meetingbot.SlackSettings{}), meetingbot.ErrInvalid, "PutSlackSettings(no user)")
}

func testSlackAgendas(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	got, err := s.SlackAgendas(ctx)
	require.NoError(t, err)
	assert.Empty(t, got, "SlackAgendas() of an empty store")
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for _, set := range []meetingbot.SlackSettings{
		{UserID: "U0BOB0001", Agenda: "07:45", TZ: "Asia/Seoul", UpdatedAt: at},
		{UserID: "U0ALICE01", Offsets: []time.Duration{time.Minute}, Agenda: "08:30", TZ: "America/New_York", UpdatedAt: at},
		{UserID: "U0CAROL01", Offsets: []time.Duration{time.Minute}, TZ: "Europe/Berlin", UpdatedAt: at},
	} {
		require.NoError(t, s.PutSlackSettings(ctx, set))
	}
	got, err = s.SlackAgendas(ctx)
	require.NoError(t, err)
	var users []string
	for _, set := range got {
		users = append(users, set.UserID+" "+set.Agenda+" "+set.TZ)
		assert.True(t, set.UpdatedAt.Equal(at), "UpdatedAt of %s = %v, want %v", set.UserID, set.UpdatedAt, at)
	}
	assert.Equal(t, []string{"U0ALICE01 08:30 America/New_York", "U0BOB0001 07:45 Asia/Seoul"}, users, "SlackAgendas()")
}

// How a subscription reminds (its calendar's own reminders, its rules)
// is stored with it, read by every replica and kept across restarts; a
// person's choice of them is kept in their settings while reminders are
// off. A subscription reminded at its calendar's reminders alone has no
// fixed offsets; one with neither is refused.
func testReminding(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t)
	hours, err := meetingbot.ParseHours("09:00-18:00 mon-fri", "Europe/Paris")
	require.NoError(t, err)
	rules := meetingbot.Rules{SkipMaybe: true, SkipAlone: true, Hours: &hours}

	a := alice()
	a.Offsets, a.OnCalendar, a.Rules = nil, true, rules
	got, added, err := s.AddSlackSubscription(ctx, a)
	require.NoError(t, err)
	require.True(t, added)
	assert.Equal(t, a, got, "a subscription at its calendar's reminders alone, with rules")
	_, _, err = s.AddSlackSubscription(ctx, eng())
	require.NoError(t, err)
	ok, err := s.SetSlackSubscriptionReminding(ctx, eng().ID, []time.Duration{5 * time.Minute}, true, meetingbot.Rules{SkipNoLink: true})
	require.NoError(t, err)
	assert.True(t, ok)
	_, err = s.SetSlackSubscriptionReminding(ctx, eng().ID, nil, false, meetingbot.Rules{})
	assert.ErrorIs(t, err, meetingbot.ErrInvalid, "neither offsets nor the calendar's reminders")
	ok, err = s.SetSlackSubscriptionReminding(ctx, "missing", nil, true, meetingbot.Rules{})
	require.NoError(t, err)
	assert.False(t, ok)
	require.NoError(t, s.Close())

	s = open(t)
	subs, err := s.SlackSubscriptions(ctx)
	require.NoError(t, err)
	require.Len(t, subs, 2)
	assert.Equal(t, a, subs[0], "after a restart")
	assert.True(t, subs[1].OnCalendar)
	assert.Equal(t, []time.Duration{5 * time.Minute}, subs[1].Offsets)
	assert.Equal(t, meetingbot.Rules{SkipNoLink: true}, subs[1].Rules)
	sub := subs[0].Subscription()
	assert.True(t, sub.OnCalendar && sub.Rules.SkipMaybe && sub.Rules.Hours != nil, "the swept subscription reminds as stored: %+v", sub)

	set := meetingbot.SlackSettings{UserID: "U0ALICE01", OnCalendar: true, Rules: rules, TZ: "Europe/Paris", UpdatedAt: created}
	require.NoError(t, s.PutSlackSettings(ctx, set))
	back, _, err := s.SlackSettingsOf(ctx, "U0ALICE01")
	require.NoError(t, err)
	assert.Equal(t, set, back, "settings keep the calendar's reminders and the rules")
}
