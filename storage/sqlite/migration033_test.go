package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMigration033RemembersWhoOpenedEachChannel: a channel kept before
// the store knew its opener was opened with a person's token when their
// calendar's account had a connection in use, and with the bot's own
// credentials otherwise; after an upgrade each is stopped as its opener.
func TestMigration033RemembersWhoOpenedEachChannel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.db")
	require.NoError(t, open(t, path).Close())
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	for _, q := range []string{
		`DELETE FROM migrations WHERE version = 33`,
		`ALTER TABLE push_channels DROP COLUMN opener`,
		`INSERT INTO connections (provider, user_id, account, token, state, created_ms, updated_ms) VALUES
			('google', 'U1', 'alice@example.com', x'00', 'active', 0, 0),
			('google', 'U2', 'bob@example.com', x'00', 'broken', 0, 0),
			('slack', 'U3', 'carol@example.com', x'00', 'active', 0, 0)`,
		`INSERT INTO push_channels (id, calendar, token, resource, expiration_ms) VALUES
			('a', 'Alice@example.com', 't', 'r', 0), ('b', 'bob@example.com', 't', 'r', 0),
			('c', 'carol@example.com', 't', 'r', 0)`,
	} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, db.Close())

	got, err := open(t, path).Channels(t.Context())
	require.NoError(t, err)
	openers := map[string]string{}
	for _, ch := range got {
		openers[ch.ID] = ch.Opener
	}
	assert.Equal(t, map[string]string{"a": "Alice@example.com as U1", "b": "", "c": ""}, openers)
}
