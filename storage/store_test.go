package storage_test

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
	"github.com/meetingbot/meetingbot/storage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
)

var ctx = context.Background()

func open(t testing.TB, path string) *storage.Store {
	t.Helper()
	s, err := storage.Open(ctx, path)
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
		{notDB, storage.ErrNotSQLite},
		{newer, storage.ErrSchemaTooNew},
	} {
		before, err := os.ReadFile(tt.path)
		require.NoError(t, err)
		_, err = storage.Open(ctx, tt.path)
		assert.ErrorIs(t, err, tt.want, "Open(%s)", filepath.Base(tt.path))
		assert.Contains(t, err.Error(), tt.path, "the error names the file")
		after, err := os.ReadFile(tt.path)
		require.NoError(t, err)
		assert.Equal(t, before, after, "Open(%s) left the file untouched", filepath.Base(tt.path))
		_, err = os.Stat(tt.path + "-wal")
		assert.True(t, errors.Is(err, os.ErrNotExist), "no WAL file beside %s", filepath.Base(tt.path))
	}
}

func entry(key string, start time.Time) meetingbot.Entry {
	return meetingbot.Entry{Subscription: "alice", Key: key, EventID: "ev", Offset: 10 * time.Minute,
		Start: start, TriggerAt: start.Add(-10 * time.Minute)}
}

func TestClaimSettleLifecycle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.db")
	a, b := open(t, path), open(t, path) // two processes on one file
	now := time.Date(2026, 11, 30, 8, 50, 0, 0, time.UTC)
	e := entry("k1", now.Add(10*time.Minute))

	claim := func(s *storage.Store, at time.Time) meetingbot.ClaimStatus {
		t.Helper()
		st, _, err := s.Claim(ctx, e, at, at.Add(2*time.Minute))
		require.NoError(t, err)
		return st
	}
	assert.Equal(t, meetingbot.Claimed, claim(a, now), "first claim")
	assert.Equal(t, meetingbot.Busy, claim(b, now.Add(time.Minute)), "claim held by a live owner")
	assert.Equal(t, meetingbot.Busy, claim(b, now.Add(3*time.Minute)), "claim of a live owner past its lease")
	require.NoError(t, a.Renew(ctx, e, now.Add(5*time.Minute)), "renew by the owner")
	assert.ErrorIs(t, b.Renew(ctx, e, now.Add(5*time.Minute)), storage.ErrClaimLost, "renew by another process")
	require.NoError(t, a.Release(ctx, e, "send unconfirmed: 503"), "release by the owner")
	assert.Equal(t, meetingbot.Orphaned, claim(b, now.Add(3*time.Minute)), "a released claim: look first")

	lost := e
	lost.Outcome = meetingbot.Sent
	assert.ErrorIs(t, a.Record(ctx, lost, now), storage.ErrClaimLost, "settle by the old owner")
	assert.ErrorIs(t, a.Release(ctx, lost, "x"), storage.ErrClaimLost, "release by the old owner")

	fail := e
	fail.Outcome, fail.Reason, fail.Retryable = meetingbot.Failed, "503", true
	require.NoError(t, b.Record(ctx, fail, now))
	assert.Equal(t, meetingbot.Claimed, claim(b, now.Add(4*time.Minute)), "retryable failure is claimable")

	sent := e
	sent.Outcome, sent.Channel, sent.MessageTS = meetingbot.Sent, "C1", "1.2"
	require.NoError(t, b.Record(ctx, sent, now.Add(4*time.Minute)))
	assert.Equal(t, meetingbot.Done, claim(a, now.Add(5*time.Minute)), "settled key")

	got, err := b.Entries(ctx, "alice", []string{"k1", "missing"})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, meetingbot.Sent, got["k1"].Outcome)
	assert.Equal(t, 3, got["k1"].Attempts)
	assert.Equal(t, "1.2", got["k1"].MessageTS)
	assert.Equal(t, e.Start, got["k1"].Start)
}

func TestDeadOwnersClaimIsOrphanedAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.db")
	a, b := open(t, path), open(t, path)
	now := time.Date(2026, 11, 30, 8, 50, 0, 0, time.UTC)
	e := entry("k1", now.Add(10*time.Minute))
	_, _, err := a.Claim(ctx, e, now, now.Add(2*time.Minute))
	require.NoError(t, err)

	orphans, err := b.Orphans(ctx, "", now)
	require.NoError(t, err)
	assert.Empty(t, orphans, "orphans while the owner lives")
	require.NoError(t, a.Close()) // the process dies; its lease has not run out

	orphans, err = b.Orphans(ctx, "", now)
	require.NoError(t, err)
	assert.Len(t, orphans, 1, "orphans once the owner is gone")
	st, _, err := b.Claim(ctx, e, now, now.Add(2*time.Minute))
	require.NoError(t, err)
	assert.Equal(t, meetingbot.Orphaned, st, "Claim of a dead owner's key")
}

func TestOrphansCursorsPrune(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "bot.db"))
	now := time.Date(2026, 11, 30, 8, 50, 0, 0, time.UTC)
	old := entry("old", now.Add(-40*24*time.Hour))
	_, _, err := s.Claim(ctx, old, now, now.Add(time.Minute))
	require.NoError(t, err)
	old.Outcome = meetingbot.Sent
	require.NoError(t, s.Record(ctx, old, now))
	_, _, err = s.Claim(ctx, entry("inflight", now.Add(-40*24*time.Hour)), now, now.Add(time.Minute))
	require.NoError(t, err)

	orphans, err := s.Orphans(ctx, "", now)
	require.NoError(t, err)
	require.Len(t, orphans, 1, "a Store's own claims are listed: its caller knows which it is working on")
	assert.Equal(t, "inflight", orphans[0].Key)

	n, err := s.Prune(ctx, now.Add(-30*24*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "pruned rows: settled ones, not this Store's claims")
	count, err := s.Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), count)

	require.NoError(t, s.AdvanceCursors(ctx, map[string]time.Time{"alice": now, "bob": now}))
	require.NoError(t, s.AdvanceCursors(ctx, map[string]time.Time{"alice": now.Add(-time.Hour)}))
	cur, err := s.Cursors(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]time.Time{"alice": now, "bob": now}, cur, "cursors never move back")
}

// A claim left in flight by a dead process for a meeting long past (its
// subscription was removed, so nobody resolves it) is pruned like a
// settled row instead of being listed on every tick forever.
func TestPruneDropsDeadClaimsPastRetention(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.db")
	a, b := open(t, path), open(t, path)
	now := time.Date(2026, 11, 30, 8, 50, 0, 0, time.UTC)
	old := entry("old", now.Add(-40*24*time.Hour))
	_, _, err := a.Claim(ctx, old, now, now.Add(time.Minute))
	require.NoError(t, err)
	require.NoError(t, a.Close())

	orphans, err := b.Orphans(ctx, "", now)
	require.NoError(t, err)
	require.Len(t, orphans, 1, "the dead process's claim is an orphan")
	n, err := b.Prune(ctx, now.Add(-30*24*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "pruned rows")
	orphans, err = b.Orphans(ctx, "", now)
	require.NoError(t, err)
	assert.Empty(t, orphans, "orphans after the prune")
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
