package sqlite_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/storage/migration"
)

// Migration 016 rebuilds the ledger to let a message say "You declined":
// the rows of a database made before it, their edits and their indexes
// come through, and a declined edit is kept after.
func TestMigration016KeepsTheLedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.db")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	migs, err := migration.Load(os.DirFS("."), "migrations")
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_ms INTEGER NOT NULL)`)
	require.NoError(t, err)
	for _, m := range migs {
		if m.Version >= 16 {
			continue
		}
		_, err := db.Exec(m.SQL)
		require.NoError(t, err, "migration %s", m.Name)
		_, err = db.Exec(`INSERT INTO migrations VALUES (?, ?, 0)`, m.Version, m.Name)
		require.NoError(t, err)
	}
	now := time.Date(2026, 11, 30, 8, 50, 0, 0, time.UTC)
	start := now.Add(10 * time.Minute).UnixMilli()
	for _, row := range []struct {
		key, edit   string
		to          int64
		editsBefore int
	}{{"moved", "moved", start + 3600000, 1}, {"cancelled", "cancelled", 0, 1}, {"plain", "", 0, 0}} {
		_, err = db.Exec(`INSERT INTO ledger (subscription, key, event_id, offset_ms, start_ms, trigger_ms, outcome, channel, message_ts, settled_ms, edit, edit_to_ms, edits)
			VALUES ('alice', ?, 'ev', 600000, ?, ?, 'sent', 'C1', '1.2', ?, ?, ?, ?)`,
			row.key, start, start-600000, now.UnixMilli(), row.edit, row.to, row.editsBefore)
		require.NoError(t, err)
	}
	_, err = db.Exec(`INSERT INTO ledger (subscription, key, event_id, offset_ms, start_ms, trigger_ms, outcome, reason, code)
		VALUES ('bob', 'k', 'ev', 0, 1, 1, 'skipped', 'started at 09:00', 'started')`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s := open(t, path)
	got, err := s.Followed(ctx, "alice", now)
	require.NoError(t, err)
	kinds := map[string]meetingbot.EditKind{}
	for _, e := range got {
		kinds[e.Key] = e.Edit.Kind
	}
	assert.Equal(t, map[string]meetingbot.EditKind{"moved": meetingbot.EditMoved, "cancelled": meetingbot.EditCancelled, "plain": meetingbot.NotEdited}, kinds,
		"the sent reminders followed after migration 016, with their edits")
	bob, err := s.Entries(ctx, "bob", []string{"k"})
	require.NoError(t, err)
	assert.Equal(t, meetingbot.ReasonStarted, bob["k"].Code, "a skipped entry keeps its code")

	i := slices.IndexFunc(got, func(e meetingbot.Entry) bool { return e.Key == "plain" })
	st, cur, err := s.ClaimEdit(ctx, got[i], now, now.Add(time.Minute))
	require.NoError(t, err)
	require.Equal(t, meetingbot.Claimed, st)
	cur.Edit = meetingbot.Edit{Kind: meetingbot.EditDeclined, Count: 1, At: now}
	require.NoError(t, s.RecordEdit(ctx, cur), "RecordEdit(declined) after migration 016")

	check, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer check.Close()
	var indexes []string
	rows, err := check.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'ledger' AND sql IS NOT NULL ORDER BY name`)
	require.NoError(t, err)
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		indexes = append(indexes, n)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []string{"ledger_moved_to", "ledger_sending", "ledger_sent_start", "ledger_trigger"}, indexes, "the ledger's indexes after migration 016")
}
