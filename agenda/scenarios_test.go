package agenda_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// The bot down through the morning: started before local noon, it sends
// the agenda at once, marked late; started after noon, it sends nothing
// and the ledger says why.
func TestDownThroughTheMorning(t *testing.T) {
	seoul := zone(t, "Asia/Seoul")
	at := time.Date(2026, 11, 30, 8, 0, 0, 0, seoul)
	tests := []struct {
		name     string
		up       time.Time
		wantSent bool
	}{
		{"up at 10:15", time.Date(2026, 11, 30, 10, 15, 0, 0, seoul), true},
		{"up at 11:59", time.Date(2026, 11, 30, 11, 59, 0, 0, seoul), true},
		{"up at 12:00", time.Date(2026, 11, 30, 12, 0, 0, 0, seoul), false},
		{"up at 15:00", time.Date(2026, 11, 30, 15, 0, 0, 0, seoul), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, at.Add(-12*time.Hour))
			e.set(bob, "08:00", "Asia/Seoul") // the evening before; then down
			e.meeting(bobEmail, "standup", time.Date(2026, 11, 30, 16, 0, 0, 0, seoul), 15*time.Minute)
			e.clock.Set(tt.up)
			e.runUntil(tt.up.Add(time.Minute))
			got := e.agendas()
			row, ok := e.entry(bob, "2026-11-30")
			require.True(t, ok, "ledger entry")
			if tt.wantSent {
				require.Len(t, got, 1, "agendas")
				assert.True(t, got[0].Posted.Equal(tt.up), "posted at %v, want %v", got[0].Posted, tt.up)
				assert.Equal(t, meetingbot.Sent, row.Outcome)
				assert.True(t, row.Late, "Late")
				return
			}
			assert.Empty(t, got, "agendas")
			assert.Equal(t, meetingbot.Skipped, row.Outcome)
			assert.Equal(t, meetingbot.ReasonAfterNoon, row.Code)
			assert.Contains(t, row.Reason, "08:00")
		})
	}
}

// A person who travels gets the agenda at their new local time from the
// next day: the zone is Slack's as read when the agenda is planned, and
// the key is the local date there.
func TestZoneChangeBetweenTwoDays(t *testing.T) {
	ny, seoul := zone(t, "America/New_York"), zone(t, "Asia/Seoul")
	first := time.Date(2026, 11, 30, 8, 0, 0, 0, ny) // 13:00Z
	e := newEnv(t, first.Add(-2*time.Minute))
	e.set(alice, "08:00", "America/New_York")
	e.meeting(aliceEmail, "ny", time.Date(2026, 11, 30, 9, 0, 0, 0, ny), time.Hour)       // 23:00 in Seoul
	e.meeting(aliceEmail, "seoul", time.Date(2026, 12, 1, 10, 0, 0, 0, seoul), time.Hour) // 01:00Z Dec 1
	e.runUntil(first.Add(time.Minute))
	require.Len(t, e.agendas(), 1, "agendas in New York")

	// She flies to Seoul; Slack updates her zone.
	e.clock.Set(time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)) // 03:00 Dec 1 in Seoul
	e.slack.SetProfile(alice, slacktest.Profile{TZ: "Asia/Seoul"})
	second := time.Date(2026, 12, 1, 8, 0, 0, 0, seoul) // 23:00Z Nov 30
	e.clock.Set(second.Add(-2 * time.Minute))
	e.runUntil(second.Add(time.Minute))
	got := e.agendas()
	require.Len(t, got, 2, "agendas after the flight")
	assert.True(t, got[1].Posted.Equal(second), "posted at %v, want 08:00 in Seoul (%v)", got[1].Posted.UTC(), second.UTC())
	assert.Equal(t, "agenda:"+alice+":2026-12-01", got[1].Metadata.EventPayload["key"])
	assert.Contains(t, blocks(t, got[1]), "Meeting seoul")
	assert.NotContains(t, blocks(t, got[1]), "Meeting ny")
}

// A day without meetings sends nothing and says so in the ledger; the
// all-day events alone are no meetings.
func TestDayWithoutMeetings(t *testing.T) {
	ny := zone(t, "America/New_York")
	at := time.Date(2026, 11, 30, 8, 30, 0, 0, ny)
	e := newEnv(t, at.Add(-2*time.Minute))
	e.set(alice, "08:30", "America/New_York")
	e.meeting(aliceEmail, "tomorrow", at.Add(24*time.Hour), time.Hour)
	e.runUntil(at.Add(2 * time.Minute))
	assert.Empty(t, e.agendas())
	row, ok := e.entry(alice, "2026-11-30")
	require.True(t, ok)
	assert.Equal(t, meetingbot.Skipped, row.Outcome)
	assert.Equal(t, meetingbot.ReasonNoMeetings, row.Code)
}

// An agenda set after its time today starts tomorrow: nothing is sent
// late for a day the person had not asked for.
func TestSetAfterItsTime(t *testing.T) {
	ny := zone(t, "America/New_York")
	e := newEnv(t, time.Date(2026, 11, 30, 9, 0, 0, 0, ny))
	e.set(alice, "08:30", "America/New_York")
	e.meeting(aliceEmail, "review", time.Date(2026, 11, 30, 11, 0, 0, 0, ny), time.Hour)
	e.runUntil(time.Date(2026, 11, 30, 9, 2, 0, 0, ny))
	assert.Empty(t, e.agendas())
	_, ok := e.entry(alice, "2026-11-30")
	assert.False(t, ok, "ledger entry for a day not asked for")
}

// 60 meetings in a day: one message Slack takes (the emulator enforces
// Block Kit's limits), listing 40 and summarising the rest.
func TestSixtyMeetings(t *testing.T) {
	ny := zone(t, "America/New_York")
	at := time.Date(2026, 11, 30, 7, 0, 0, 0, ny)
	e := newEnv(t, at.Add(-time.Minute))
	e.set(alice, "07:00", "America/New_York")
	for i := range 60 {
		e.meeting(aliceEmail, fmt.Sprintf("m%02d", i), at.Add(time.Hour+time.Duration(i)*10*time.Minute), 10*time.Minute)
	}
	e.runUntil(at.Add(time.Minute))
	got := e.agendas()
	require.Len(t, got, 1)
	body := blocks(t, got[0])
	assert.Contains(t, body, "60 meetings")
	assert.Contains(t, body, "Meeting m39")
	assert.NotContains(t, body, "Meeting m40")
	assert.Contains(t, body, fmt.Sprintf("and %d more meetings", 60-notify.MaxAgendaMeetings))
	assert.LessOrEqual(t, strings.Count(string(got[0].Blocks), `"block_id"`), 50)
}

// Two processes on one database, SQLite or PostgreSQL, both planning the
// same agendas at the same instant: each goes out once.
func TestTwoProcesses(t *testing.T) {
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			pgURL := ""
			if db == "postgres" {
				pgURL = pgtest.URL(t)
			}
			ny := zone(t, "America/New_York")
			at := time.Date(2026, 11, 30, 8, 30, 0, 0, ny)
			e := newEnvOn(t, at.Add(-time.Minute), pgURL)
			e.set(alice, "08:30", "America/New_York")
			e.set(bob, "22:30", "Asia/Seoul") // the same instant
			e.meeting(aliceEmail, "standup", at.Add(time.Hour), 15*time.Minute)
			e.meeting(bobEmail, "standup", at.Add(time.Hour), 15*time.Minute)
			other, _, _ := e.open()
			e.clock.Set(at)
			var wg sync.WaitGroup
			for _, en := range []interface{ Tick(context.Context) error }{e.engine, other} {
				wg.Go(func() { assert.NoError(t, en.Tick(context.Background())) })
			}
			wg.Wait()
			e.runUntil(at.Add(time.Minute), e.engine, other)
			got := e.agendas()
			require.Len(t, got, 2, "agendas of two people from two processes")
			assert.NotEqual(t, got[0].Channel, got[1].Channel)
		})
	}
}

// An agenda turned off after its timer was armed sends nothing; an
// interrupted send of one turned off is looked up, and settled as
// skipped when Slack does not have it.
func TestTurnedOff(t *testing.T) {
	ny := zone(t, "America/New_York")
	at := time.Date(2026, 11, 30, 8, 30, 0, 0, ny)
	e := newEnv(t, at.Add(-40*time.Second))
	e.set(alice, "08:30", "America/New_York")
	e.set(bob, "22:30", "Asia/Seoul") // the same instant
	e.meeting(aliceEmail, "standup", at.Add(time.Hour), 15*time.Minute)
	require.NoError(t, e.engine.Tick(context.Background()))
	require.Equal(t, 2, e.engine.Armed(), "timers armed")
	e.set(alice, "", "America/New_York")

	// Alice's send of yesterday was interrupted by a crash of another
	// process.
	dying, err := sqlite.Open(context.Background(), e.path)
	require.NoError(t, err)
	en := meetingbot.Entry{Subscription: meetingbot.AgendaSubscription(alice), Kind: meetingbot.KindAgenda, Key: meetingbot.AgendaKey(alice, "2026-11-29"),
		Start: time.Date(2026, 11, 29, 0, 0, 0, 0, ny), TriggerAt: at.Add(-24 * time.Hour)}
	_, _, err = dying.Claim(context.Background(), en, en.TriggerAt, en.TriggerAt.Add(time.Minute))
	require.NoError(t, err)
	require.NoError(t, dying.Close())

	e.runUntil(at.Add(time.Minute))
	assert.Empty(t, e.agendas(), "agendas")
	_, ok := e.entry(alice, "2026-11-30")
	assert.False(t, ok, "ledger entry of an agenda turned off before its time")
	row, ok := e.entry(alice, "2026-11-29")
	require.True(t, ok)
	assert.Equal(t, meetingbot.Skipped, row.Outcome, "an interrupted send of an agenda turned off")
	assert.Equal(t, meetingbot.ReasonAgendaOff, row.Code)
	row, ok = e.entry(bob, "2026-11-30")
	require.True(t, ok)
	assert.Equal(t, meetingbot.ReasonNoMeetings, row.Code, "Bob's day today")
}

// Run plans until its context ends, then stops its timers and returns.
func TestRunStops(t *testing.T) {
	ny := zone(t, "America/New_York")
	at := time.Date(2026, 11, 30, 8, 30, 0, 0, ny)
	e := newEnv(t, at.Add(-40*time.Second))
	e.set(alice, "08:30", "America/New_York")
	e.meeting(aliceEmail, "standup", at.Add(time.Hour), 15*time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- e.engine.Run(ctx) }()
	require.Eventually(t, func() bool { return e.engine.Armed() == 1 }, 5*time.Second, 10*time.Millisecond, "a timer armed by Run's first pass")
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	assert.Equal(t, 0, e.engine.Armed(), "timers after Run")
	e.clock.Advance(time.Minute)
	assert.Empty(t, e.agendas(), "agendas after Run returned")
}
