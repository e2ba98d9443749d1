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

// TestMigration019GivesOldEntriesTheirKind: entries written before the
// ledger kept kinds take theirs from the pseudo-subscription they were
// written under, so that after an upgrade the scheduler still leaves an
// agenda's, a snooze's and a notice's claims to their engines.
func TestMigration019GivesOldEntriesTheirKind(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "bot.db")
	s := open(t, path)
	now := time.Date(2026, 11, 30, 8, 50, 0, 0, time.UTC)
	subs := map[string]meetingbot.Kind{"alice@example.com": meetingbot.KindReminder, "status:U1": meetingbot.KindStatus,
		"snooze:U1": meetingbot.KindSnooze, "invite:U1": meetingbot.KindInvite, "agenda:U1": meetingbot.KindAgenda}
	for sub := range subs {
		_, _, err := s.Claim(ctx, meetingbot.Entry{Subscription: sub, Key: "k", Start: now.Add(time.Hour), TriggerAt: now}, now, now.Add(time.Minute))
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE ledger SET kind = ''`)
	require.NoError(t, err)
	_, err = db.Exec(`DELETE FROM migrations WHERE version = 19`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	// The store refuses to re-add the column; drop it as the old schema had none.
	db, err = sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec(`ALTER TABLE ledger DROP COLUMN kind`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s = open(t, path)
	for sub, want := range subs {
		got, err := s.Entries(ctx, sub, []string{"k"})
		require.NoError(t, err)
		assert.Equal(t, want, got["k"].Kind, "kind of %s's entry after the migration", sub)
	}
}
