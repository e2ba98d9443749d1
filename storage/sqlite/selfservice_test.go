package sqlite_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// TestMigrationAddsSelfServiceToAnExistingDatabase opens a database that
// only the first version of the bot has seen, with a ledger row in it.
func TestMigrationAddsSelfServiceToAnExistingDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	init, err := os.ReadFile(filepath.Join("migrations", "001_init.sql"))
	require.NoError(t, err)
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec(string(init) + `;
		CREATE TABLE migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_ms INTEGER NOT NULL) STRICT;
		INSERT INTO migrations VALUES (1, '001_init.sql', 0);
		INSERT INTO cursors VALUES ('alice@example.com', 1)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s := open(t, path)
	_, added, err := s.AddSlackSubscription(ctx, alice())
	require.NoError(t, err)
	assert.True(t, added)
	db, err = sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var cursors, version int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM cursors`).Scan(&cursors))
	assert.Equal(t, 1, cursors, "the old cursor is kept")
	require.NoError(t, db.QueryRow(`SELECT max(version) FROM migrations`).Scan(&version))
	files, err := filepath.Glob(filepath.Join("migrations", "*.sql"))
	require.NoError(t, err)
	last, _, _ := strings.Cut(filepath.Base(files[len(files)-1]), "_")
	assert.Equal(t, last, fmt.Sprintf("%03d", version), "schema version: every migration applied, up to the last file's")
}
