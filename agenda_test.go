package meetingbot_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
)

func TestAgendaTime(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	seoul, err := time.LoadLocation("Asia/Seoul")
	require.NoError(t, err)
	lordHowe, err := time.LoadLocation("Australia/Lord_Howe")
	require.NoError(t, err)
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return v
	}
	tests := []struct {
		name   string
		date   string
		hh, mm int
		loc    *time.Location
		want   time.Time
	}{
		{"ordinary day", "2026-11-30", 8, 30, ny, utc("2026-11-30T13:30:00Z")},
		{"ordinary day in Seoul", "2026-11-30", 8, 30, seoul, utc("2026-11-29T23:30:00Z")},
		{"spring forward, in the gap", "2026-03-08", 2, 30, ny, utc("2026-03-08T07:00:00Z")},
		{"spring forward, the gap's start", "2026-03-08", 2, 0, ny, utc("2026-03-08T07:00:00Z")},
		{"spring forward, before the gap", "2026-03-08", 1, 59, ny, utc("2026-03-08T06:59:00Z")},
		{"spring forward, after the gap", "2026-03-08", 3, 0, ny, utc("2026-03-08T07:00:00Z")},
		{"spring forward, morning", "2026-03-08", 8, 0, ny, utc("2026-03-08T12:00:00Z")},
		{"fall back, twice: the first", "2026-11-01", 1, 30, ny, utc("2026-11-01T05:30:00Z")},
		{"fall back, the hour's start: the first", "2026-11-01", 1, 0, ny, utc("2026-11-01T05:00:00Z")},
		{"fall back, once", "2026-11-01", 2, 0, ny, utc("2026-11-01T07:00:00Z")},
		{"fall back, morning", "2026-11-01", 8, 0, ny, utc("2026-11-01T13:00:00Z")},
		{"half-hour shift, in the gap", "2026-10-04", 2, 15, lordHowe, utc("2026-10-03T15:30:00Z")},
		{"half-hour shift, twice: the first", "2026-04-05", 1, 45, lordHowe, utc("2026-04-04T14:45:00Z")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := time.Parse(time.DateOnly, tt.date)
			require.NoError(t, err)
			got := meetingbot.AgendaTime(d.Year(), d.Month(), d.Day(), tt.hh, tt.mm, tt.loc)
			assert.True(t, got.Equal(tt.want), "AgendaTime(%s %02d:%02d %s) = %v, want %v", tt.date, tt.hh, tt.mm, tt.loc, got.UTC(), tt.want)
		})
	}
}

func TestAgendaKeys(t *testing.T) {
	assert.Equal(t, "agenda:U1:2026-11-30", meetingbot.AgendaKey("U1", "2026-11-30"))
	sub := meetingbot.Agenda{User: "U1", Date: "2026-11-30", Calendar: "alice@example.com"}.Subscription()
	assert.Equal(t, meetingbot.AgendaSubscription("U1"), sub.ID)
	assert.Equal(t, meetingbot.KindAgenda, sub.Kind, "an agenda's subscription says it is one")
}
