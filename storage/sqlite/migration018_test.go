package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot/storage/storetest"
)

// TestMigration018GroupsSnoozesByMeeting: the snoozes pending when the bot
// is upgraded take their meeting's group, so that a click after the
// upgrade finds them.
func TestMigration018GroupsSnoozesByMeeting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.db")
	s := open(t, path)
	storetest.RunSnoozeGroupMigration(t, s, func() storetest.TimerStore {
		require.NoError(t, s.Close())
		db, err := sql.Open("sqlite", path)
		require.NoError(t, err)
		_, err = db.Exec(`DELETE FROM migrations WHERE version = 18`)
		require.NoError(t, err)
		require.NoError(t, db.Close())
		return open(t, path)
	})
}
