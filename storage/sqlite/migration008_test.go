package sqlite_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot/storage/migration"
)

// A database mirrored before migration 008 holds instances that name no
// recurring event: opening it with this bot makes every calendar's next
// sync a full one, which writes them anew.
func TestMigration008SyncsEveryCalendarInFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.db")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	migs, err := migration.Load(os.DirFS("."), "migrations")
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_ms INTEGER NOT NULL)`)
	require.NoError(t, err)
	for _, m := range migs {
		if m.Version == 8 {
			continue
		}
		_, err := db.Exec(m.SQL)
		require.NoError(t, err, "migration %s", m.Name)
		_, err = db.Exec(`INSERT INTO migrations VALUES (?, ?, 0)`, m.Version, m.Name)
		require.NoError(t, err)
	}
	_, err = db.Exec(`INSERT INTO calendar_sync (calendar, token, from_ms, horizon_ms, full_ms, synced_ms) VALUES ('alice', 'CPDAlvWDx70CEPDAlvWDx70CGAU=', 1, 2, 3, 4)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s := open(t, path)
	st, ok, err := s.CalendarSync(ctx, "alice")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Empty(t, st.Token, "alice's sync token after migration 008: none, so the next sync is full")
	names, err := s.ChannelNames(ctx)
	require.NoError(t, err)
	assert.Empty(t, names, "ChannelNames after migration 008")
}
