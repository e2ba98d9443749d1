package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/storage/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
)

var ctx = context.Background()

func open(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(ctx, path)
	require.NoError(t, err, "Open(%s)", path)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestOpenCreatesPrivateFileAndMigratesOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.db")
	s := open(t, path)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "file mode")
	require.NoError(t, s.Close())

	open(t, path) // a second open applies nothing twice
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM migrations`).Scan(&n))
	files, err := filepath.Glob("migrations/*.sql")
	require.NoError(t, err)
	assert.Equal(t, len(files), n, "recorded migrations")
	var mode string
	require.NoError(t, db.QueryRow(`PRAGMA journal_mode`).Scan(&mode))
	assert.Equal(t, "wal", mode)
}

// A ledger written before reason codes gets the code each reason text
// stood for, so metrics and the audit read old rows as they read new ones.
func TestMigrationFillsReasonCodes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.db")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	initSQL, err := os.ReadFile("migrations/001_init.sql")
	require.NoError(t, err)
	_, err = db.Exec(string(initSQL) + `;
		CREATE TABLE migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_ms INTEGER NOT NULL);
		INSERT INTO migrations VALUES (1, '001_init.sql', 0)`)
	require.NoError(t, err)
	rows := []struct {
		key, outcome, reason, owner string
		retryable                   int
		want                        meetingbot.ReasonCode
	}{
		{"a", "skipped", "started", "", 0, meetingbot.ReasonStarted},
		{"b", "skipped", "started; an interrupted send was not confirmed", "", 0, meetingbot.ReasonStarted},
		{"c", "skipped", "meeting no longer due; an interrupted send was not confirmed", "", 0, meetingbot.ReasonNoLongerDue},
		{"d", "failed", "notify: channel_not_found", "", 0, meetingbot.ReasonPermanent},
		{"e", "failed", "notify: 503", "", 1, meetingbot.ReasonTransient},
		{"f", "sent", "confirmed in Slack after an interrupted send", "", 0, meetingbot.ReasonInterruptedConfirmed},
		{"g", "sent", "resent after an interrupted send", "", 0, meetingbot.ReasonResent},
		{"h", "sent", "", "", 0, ""},
		{"i", "sending", "", "host-1-abc", 0, ""},
	}
	for _, r := range rows {
		_, err := db.Exec(`INSERT INTO ledger (subscription, key, event_id, offset_ms, start_ms, trigger_ms, outcome, reason, retryable, owner)
			VALUES ('alice', ?, 'ev', 600000, 1, 1, ?, ?, ?, ?)`, r.key, r.outcome, r.reason, r.retryable, r.owner)
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())

	s := open(t, path)
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = r.key
	}
	got, err := s.Entries(ctx, "alice", keys)
	require.NoError(t, err)
	for _, r := range rows {
		assert.Equal(t, r.want, got[r.key].Code, "code of %q (%s)", r.reason, r.outcome)
		assert.Equal(t, r.reason, got[r.key].Reason, "the reason text stays")
	}
}

func TestOpenRefusesWhatItCannotRead(t *testing.T) {
	dir := t.TempDir()
	notDB := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(notDB, []byte("meeting notes, not a database\n"), 0o644))

	newer := filepath.Join(dir, "newer.db")
	db, err := sql.Open("sqlite", newer)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_ms INTEGER NOT NULL);
		INSERT INTO migrations VALUES (1, '001_init.sql', 0), (99, '099_future.sql', 0)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	for _, tt := range []struct {
		path string
		want error
	}{
		{notDB, sqlite.ErrNotSQLite},
		{newer, sqlite.ErrSchemaTooNew},
	} {
		before, err := os.ReadFile(tt.path)
		require.NoError(t, err)
		_, err = sqlite.Open(ctx, tt.path)
		assert.ErrorIs(t, err, tt.want, "Open(%s)", filepath.Base(tt.path))
		assert.Contains(t, err.Error(), tt.path, "the error names the file")
		after, err := os.ReadFile(tt.path)
		require.NoError(t, err)
		assert.Equal(t, before, after, "Open(%s) left the file untouched", filepath.Base(tt.path))
		_, err = os.Stat(tt.path + "-wal")
		assert.True(t, errors.Is(err, os.ErrNotExist), "no WAL file beside %s", filepath.Base(tt.path))
	}
}

func TestOpenSweepsLockFilesOfDeadProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.db")
	live := open(t, path)
	dir := path + ".owners"
	// A process killed with SIGKILL leaves its file behind, unlocked.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "host-123-deadbeef.lock"), nil, 0o600))

	next := open(t, path)
	names, err := os.ReadDir(dir)
	require.NoError(t, err)
	var got []string
	for _, n := range names {
		got = append(got, n.Name())
	}
	assert.ElementsMatch(t, []string{live.Owner() + ".lock", next.Owner() + ".lock"}, got, "lock files after Open")
}

// A path is a path, not a URI: "?", "#" and "%41" in DATABASE_PATH name
// exactly the file that was checked and locked, with its private mode, and
// the ledger written there is read back from it.
func TestOpenPathWithURICharacters(t *testing.T) {
	for _, name := range []string{"a?b.db", "c#d.db", "e%41f.db", "g&mode=ro.db", "h?_pragma=foo.db", "i j.db"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			s := open(t, path)
			en := meetingbot.Entry{Subscription: "team", Key: "k1", EventID: "e", Start: time.Unix(1772442000, 0).UTC(), TriggerAt: time.Unix(1772441400, 0).UTC()}
			now := en.TriggerAt
			st, _, err := s.Claim(ctx, en, now, now.Add(time.Minute))
			require.NoError(t, err)
			require.Equal(t, meetingbot.Claimed, st)
			require.NoError(t, s.Close())

			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			for _, n := range names {
				if n != name && !strings.HasPrefix(n, name+"-") && !strings.HasPrefix(n, name+".") {
					t.Errorf("Open(%q) made %q in its directory (all: %q); want only %q and its companions", name, n, names, name)
				}
			}
			fi, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "mode of %s", name)
			s = open(t, path)
			st, _, err = s.Claim(ctx, en, now, now.Add(time.Minute))
			require.NoError(t, err)
			assert.NotEqual(t, meetingbot.Claimed, st, "Claim(%s) after reopening %s: the first claim must be there", en.Key, name)
		})
	}
}

// bot audit opens the database with OpenExisting: a file the bot has never
// migrated, or migrated with an older binary, is refused as it is, and a
// database of this binary's schema opens.
func TestOpenExistingRefusesWhatTheBotHasNotMigrated(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.db")
	db, err := sql.Open("sqlite", old)
	require.NoError(t, err)
	initSQL, err := os.ReadFile("migrations/001_init.sql")
	require.NoError(t, err)
	_, err = db.Exec(string(initSQL) + `;
		CREATE TABLE migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_ms INTEGER NOT NULL) STRICT;
		INSERT INTO migrations VALUES (1, '001_init.sql', 0)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	missing := filepath.Join(dir, "missing.db")

	for _, tt := range []struct {
		path string
		want error
		says string
	}{
		{old, sqlite.ErrSchemaTooOld, "start the bot once on it"},
		{missing, sqlite.ErrNotMigrated, "no ledger there"},
	} {
		before, _ := os.ReadFile(tt.path)
		_, err := sqlite.OpenExisting(ctx, tt.path)
		assert.ErrorIs(t, err, tt.want, "OpenExisting(%s)", filepath.Base(tt.path))
		if err != nil {
			assert.Contains(t, err.Error(), tt.says, "OpenExisting(%s)", filepath.Base(tt.path))
		}
		after, _ := os.ReadFile(tt.path)
		assert.Equal(t, before, after, "OpenExisting(%s) left the file as it was", filepath.Base(tt.path))
	}
	_, err = os.Stat(missing)
	assert.True(t, errors.Is(err, os.ErrNotExist), "OpenExisting created %s", missing)

	current := filepath.Join(dir, "current.db")
	open(t, current).Close()
	s, err := sqlite.OpenExisting(ctx, current)
	require.NoError(t, err, "OpenExisting of a database of this binary's schema")
	s.Close()
}
