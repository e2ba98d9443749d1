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

// TestMigration020KeepsChannelsAsTheyWere: a channel subscribed before
// channels could follow their calendar keeps its reminders after the
// upgrade and follows nothing until someone asks.
func TestMigration020KeepsChannelsAsTheyWere(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "bot.db")
	s := open(t, path)
	sub := meetingbot.SlackSubscription{ID: "slack:team=C0ENG0001", Kind: meetingbot.SlackChannel, CalendarID: "team@example.com",
		Destination: "C0ENG0001", Offsets: []time.Duration{10 * time.Minute}, CreatedBy: "U0ADMIN01", CreatedAt: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	_, _, err := s.AddSlackSubscription(ctx, sub)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	for _, q := range []string{`DELETE FROM migrations WHERE version BETWEEN 20 AND 24`, `DROP TABLE feed_seen`, `DROP TABLE feed_primed`, `DROP TABLE feed_pending`,
		`ALTER TABLE slack_subscriptions DROP COLUMN changes_ms`, `ALTER TABLE slack_subscriptions DROP COLUMN daily`,
		`ALTER TABLE slack_subscriptions DROP COLUMN weekly`, `ALTER TABLE slack_subscriptions DROP COLUMN zone`} {
		_, err = db.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, db.Close())

	s = open(t, path)
	got, ok, err := s.SlackSubscription(ctx, sub.ID)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, sub.Offsets, got.Offsets, "offsets after the migration")
	assert.False(t, got.Following.Any(), "follows nothing after the migration: %+v", got.Following)
}
