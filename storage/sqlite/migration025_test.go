package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
)

// TestMigration025KeepsSubscriptionsAndResyncsCalendars: after the
// upgrade, subscriptions made before remind as they did (their offsets, no
// calendar reminders, no rules), and every mirrored calendar's next sync
// is a full one, so that its instances carry what the rules and the card
// read.
func TestMigration025KeepsSubscriptionsAndResyncsCalendars(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "bot.db")
	s := open(t, path)
	now := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	sub := meetingbot.SlackSubscription{ID: "slack:alice@example.com=U1", Kind: meetingbot.SlackPersonal, CalendarID: "alice@example.com",
		Destination: "U1", Offsets: []time.Duration{10 * time.Minute}, CreatedBy: "U1", CreatedAt: now}
	_, _, err := s.AddSlackSubscription(ctx, sub)
	require.NoError(t, err)
	require.NoError(t, s.PutSlackSettings(ctx, meetingbot.SlackSettings{UserID: "U1", Offsets: []time.Duration{10 * time.Minute}, UpdatedAt: now}))
	st := meetingbot.CalendarSync{CalendarID: "alice@example.com", Token: "t1", From: now.Add(-time.Hour), Horizon: now.Add(24 * time.Hour), FullAt: now, SyncedAt: now}
	require.NoError(t, s.ReplaceMirror(ctx, st, nil))
	require.NoError(t, s.Close())

	// The schema as it was before 025.
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	for _, q := range []string{
		`ALTER TABLE slack_subscriptions DROP COLUMN on_calendar`, `ALTER TABLE slack_subscriptions DROP COLUMN rules`,
		`ALTER TABLE slack_settings DROP COLUMN on_calendar`, `ALTER TABLE slack_settings DROP COLUMN rules`,
		`UPDATE calendar_sync SET token = 't1'`, `DELETE FROM migrations WHERE version = 25`,
	} {
		_, err = db.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, db.Close())

	s = open(t, path)
	got, ok, err := s.SlackSubscription(ctx, sub.ID)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, sub, got, "the subscription reminds as before")
	set, _, err := s.SlackSettingsOf(ctx, "U1")
	require.NoError(t, err)
	assert.False(t, set.OnCalendar)
	assert.True(t, set.Rules.Zero())
	synced, ok, err := s.CalendarSync(ctx, "alice@example.com")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Empty(t, synced.Token, "the next sync is a full one")
}
