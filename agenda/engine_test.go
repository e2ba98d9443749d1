package agenda_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// An ordinary day, in New York and in Seoul: one DM at HH:MM local,
// within a second, listing that local day's meetings in start order and
// not the next day's; the next day gets its own.
func TestOrdinaryDay(t *testing.T) {
	tests := []struct {
		name, user, email, tz, hhmm string
	}{
		{"New York", alice, aliceEmail, "America/New_York", "08:30"},
		{"Seoul", bob, bobEmail, "Asia/Seoul", "07:45"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc := zone(t, tt.tz)
			local := func(d, hh, mm int) time.Time { return time.Date(2026, 11, 30+d, hh, mm, 0, 0, loc) }
			var hh, mm int
			fmt.Sscanf(tt.hhmm, "%d:%d", &hh, &mm)
			at := local(0, hh, mm)
			e := newEnv(t, at.Add(-3*time.Minute))
			e.set(tt.user, tt.hhmm, tt.tz)
			e.meeting(tt.email, "review", local(0, 11, 0), time.Hour)
			e.meeting(tt.email, "standup", local(0, 9, 30), 15*time.Minute)
			e.meeting(tt.email, "late", local(0, 23, 30), 15*time.Minute)
			e.meeting(tt.email, "yesterday", local(-1, 23, 0), 15*time.Minute)
			e.meeting(tt.email, "tomorrow", local(1, 0, 0), 15*time.Minute)

			e.runUntil(at.Add(5 * time.Minute))
			got := e.agendas()
			require.Len(t, got, 1, "agendas by %v", at.Add(5*time.Minute))
			assert.True(t, got[0].Posted.Equal(at), "agenda posted at %v, want %v (HH:MM, not the next pass)", got[0].Posted, at)
			body := blocks(t, got[0])
			assert.Regexp(t, `(?s)Meeting standup.*Meeting review.*Meeting late`, body, "meetings in start order")
			assert.NotContains(t, body, "Meeting yesterday")
			assert.NotContains(t, body, "Meeting tomorrow")
			assert.Equal(t, "agenda:"+tt.user+":2026-11-30", got[0].Metadata.EventPayload["key"])
			en, ok := e.entry(tt.user, "2026-11-30")
			require.True(t, ok)
			assert.Equal(t, meetingbot.Sent, en.Outcome)
			assert.False(t, en.Late)
			assert.Equal(t, got[0].TS, en.MessageTS)

			e.clock.Set(local(1, hh, mm).Add(-3 * time.Minute))
			e.runUntil(local(1, hh, mm).Add(time.Minute))
			got = e.agendas()
			require.Len(t, got, 2, "agendas the next day")
			assert.True(t, got[1].Posted.Equal(local(1, hh, mm)), "next agenda posted at %v, want %v", got[1].Posted, local(1, hh, mm))
			assert.Contains(t, blocks(t, got[1]), "Meeting tomorrow")
		})
	}
}

// The DST days of New York: an 02:30 that does not exist goes out at
// 03:00 EDT, the first instant after the gap; an 01:30 that happens twice
// goes out once, at the first.
func TestDSTDays(t *testing.T) {
	ny := zone(t, "America/New_York")
	tests := []struct {
		name string
		day  time.Time // midnight
		hhmm string
		want time.Time
	}{
		{"spring forward 02:30", time.Date(2026, 3, 8, 0, 0, 0, 0, ny), "02:30", time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)},
		{"fall back 01:30", time.Date(2026, 11, 1, 0, 0, 0, 0, ny), "01:30", time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.want.Add(-3*time.Minute))
			e.set(alice, tt.hhmm, "America/New_York")
			e.meeting(aliceEmail, "standup", tt.day.Add(9*time.Hour), 15*time.Minute)
			e.runUntil(tt.want.Add(65 * time.Minute)) // past the second 01:30 of the fall-back day
			got := e.agendas()
			require.Len(t, got, 1, "agendas on %s", tt.name)
			assert.True(t, got[0].Posted.Equal(tt.want), "posted at %v, want %v", got[0].Posted.UTC(), tt.want)
			assert.Equal(t, "agenda:"+alice+":"+tt.day.Format(time.DateOnly), got[0].Metadata.EventPayload["key"])
		})
	}
}

// A restart at the minute: the process that claimed the agenda died
// after Slack took it and before the ledger said so, or before it posted;
// the next process sends it once either way.
func TestRestartAtTheMinute(t *testing.T) {
	ny := zone(t, "America/New_York")
	at := time.Date(2026, 11, 30, 8, 30, 0, 0, ny)
	for _, posted := range []bool{true, false} {
		t.Run(fmt.Sprintf("posted=%v", posted), func(t *testing.T) {
			e := newEnv(t, at.Add(-time.Minute))
			e.set(alice, "08:30", "America/New_York")
			e.meeting(aliceEmail, "standup", at.Add(time.Hour), 15*time.Minute)

			// The first process: claimed at 08:30 and killed.
			dying, err := sqlite.Open(context.Background(), e.path)
			require.NoError(t, err)
			en := meetingbot.Entry{Subscription: meetingbot.AgendaSubscription(alice), Kind: meetingbot.KindAgenda, Key: meetingbot.AgendaKey(alice, "2026-11-30"),
				Start: time.Date(2026, 11, 30, 0, 0, 0, 0, ny), TriggerAt: at}
			st, _, err := dying.Claim(context.Background(), en, at, at.Add(2*time.Minute))
			require.NoError(t, err)
			require.Equal(t, meetingbot.Claimed, st)
			e.clock.Set(at)
			if posted {
				first, _, _ := e.open()
				require.NoError(t, first.Tick(context.Background())) // Busy: the claim is alive
				require.Empty(t, e.agendas(), "agendas while the first process lives")
				postAs(t, e, at)
			}
			require.NoError(t, dying.Close())

			e.clock.Set(at.Add(5 * time.Second))
			e.runUntil(at.Add(2 * time.Minute))
			got := e.agendas()
			require.Len(t, got, 1, "agendas after the restart")
			row, ok := e.entry(alice, "2026-11-30")
			require.True(t, ok)
			assert.Equal(t, meetingbot.Sent, row.Outcome)
			if posted {
				assert.Equal(t, meetingbot.ReasonInterruptedConfirmed, row.Code)
			} else {
				assert.True(t, got[0].Posted.Equal(at.Add(5*time.Second)), "resent at %v", got[0].Posted)
				assert.False(t, row.Late, "a restart within a pass is on time")
			}
		})
	}
}
