package postgres_test

import (
	"errors"
	"fmt"
	neturl "net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/storage/postgres"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// count runs a count query in url's schema.
func count(t *testing.T, url, q string) int {
	t.Helper()
	var n int
	require.NoError(t, pgtest.Conn(t, url).QueryRow(t.Context(), q).Scan(&n), q)
	return n
}

// Replicas starting together on an empty database: every Open succeeds and
// each migration is applied once.
func TestOpenMigratesOnceWhenReplicasStartTogether(t *testing.T) {
	for round := range 5 {
		url := pgtest.URL(t)
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() {
				s, err := postgres.Open(t.Context(), url, postgres.Options{})
				errs[i] = err
				if err == nil {
					s.Close()
				}
			})
		}
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "round %d: Open #%d", round, i)
		}
		files, err := filepath.Glob("migrations/*.sql")
		require.NoError(t, err)
		assert.Equal(t, len(files), count(t, url, `SELECT count(*) FROM migrations`), "round %d: recorded migrations", round)
		open(t, url, postgres.Options{}).Close() // and once more, later
		assert.Equal(t, len(files), count(t, url, `SELECT count(*) FROM migrations`), "round %d: recorded migrations after a restart", round)
	}
}

func TestOpenRefusesANewerSchemaAndChangesNothing(t *testing.T) {
	url := pgtest.URL(t)
	pgtest.Exec(t, url, `CREATE TABLE migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
		INSERT INTO migrations (version, name) VALUES (1, '001_init.sql'), (99, '099_future.sql')`)
	_, err := postgres.Open(t.Context(), url, postgres.Options{})
	require.ErrorIs(t, err, postgres.ErrSchemaTooNew)
	files, globErr := filepath.Glob("migrations/*.sql")
	require.NoError(t, globErr)
	last, _, _ := strings.Cut(filepath.Base(files[len(files)-1]), "_")
	assert.Contains(t, err.Error(), fmt.Sprintf("version 99, this binary knows up to %s", strings.TrimLeft(last, "0")), "the error says which versions")
	assert.Equal(t, 1, count(t, url, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()`), "tables after a refused Open")
}

// bot audit opens the database with Existing: it must not create an empty
// ledger where the bot's is not.
func TestOpenExistingRefusesADatabaseNeverMigrated(t *testing.T) {
	url := pgtest.URL(t)
	_, err := postgres.Open(t.Context(), url, postgres.Options{Existing: true})
	require.ErrorIs(t, err, postgres.ErrNotMigrated)
	assert.Equal(t, 0, count(t, url, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()`), "tables after a refused Open")
	open(t, url, postgres.Options{}).Close()
	open(t, url, postgres.Options{Existing: true})
}

// A search_path naming a schema that does not exist is an operator's
// mistake, said as such.
func TestOpenNeedsTheSchemaOfItsSearchPath(t *testing.T) {
	url := strings.Replace(pgtest.URL(t), "search_path=mbtest_", "search_path=nosuch_", 1)
	_, err := postgres.Open(t.Context(), url, postgres.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no schema to create the tables in")
}

// The URL's password never shows in an error, whatever goes wrong: a
// server that does not answer, parameters pgx refuses, no URL at all.
func TestOpenNeverShowsThePassword(t *testing.T) {
	const secret = "S3cretPassw0rd"
	for _, url := range []string{
		"postgres://bot:" + secret + "@127.0.0.1:1/meetingbot?connect_timeout=2",
		"postgres://bot:" + secret + "@127.0.0.1:5432/meetingbot?sslmode=bogus",
		"postgres://bot:" + secret + "@127.0.0.1:5432/meetingbot?connect_timeout=soon",
		"postgres://127.0.0.1:1/meetingbot?password=" + secret + "&connect_timeout=2",
		"postgresql://bot:" + secret + "@[::1:5432/meetingbot",
		"host=127.0.0.1 password=" + secret,
	} {
		_, err := postgres.Open(t.Context(), url, postgres.Options{})
		if err == nil {
			t.Errorf("Open(%s) = nil, want an error", postgres.Redact(url))
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("Open(%s) = %q, shows the password", postgres.Redact(url), err)
		}
	}
	assert.Equal(t, "postgres://db.internal:5432/meetingbot", postgres.Redact("postgres://bot:"+secret+"@db.internal:5432/meetingbot?sslmode=require&password="+secret))
}

// A ledger written before reason codes gets the code each reason text
// stood for, as SQLite's migration 002 does.
func TestMigrationFillsReasonCodes(t *testing.T) {
	url := pgtest.URL(t)
	init := readMigration(t, "001_init.sql")
	pgtest.Exec(t, url, init+`;
		CREATE TABLE migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
		INSERT INTO migrations (version, name) VALUES (1, '001_init.sql')`)
	rows := []struct {
		key, outcome, reason, owner string
		retryable                   bool
		want                        meetingbot.ReasonCode
	}{
		{"a", "skipped", "started", "", false, meetingbot.ReasonStarted},
		{"c", "skipped", "meeting no longer due; an interrupted send was not confirmed", "", false, meetingbot.ReasonNoLongerDue},
		{"d", "failed", "notify: channel_not_found", "", false, meetingbot.ReasonPermanent},
		{"e", "failed", "notify: 503", "", true, meetingbot.ReasonTransient},
		{"s", "failed", "stopped before sending", "", true, meetingbot.ReasonStopped},
		{"f", "sent", "confirmed in Slack after an interrupted send", "", false, meetingbot.ReasonInterruptedConfirmed},
		{"g", "sent", "resent after an interrupted send", "", false, meetingbot.ReasonResent},
		{"h", "sent", "", "", false, ""},
		{"i", "sending", "", "host-1-abc", false, ""},
		{"j", "sending", "send unconfirmed: 503", "", false, meetingbot.ReasonUnconfirmed},
	}
	for _, r := range rows {
		pgtest.Exec(t, url, `INSERT INTO ledger (subscription, key, event_id, offset_ms, start_at, trigger_at, outcome, reason, retryable, owner)
			VALUES ('alice', $1, 'ev', 600000, now(), now(), $2, $3, $4, $5)`, r.key, r.outcome, r.reason, r.retryable, r.owner)
	}
	s := open(t, url, postgres.Options{})
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = r.key
	}
	got, err := s.Entries(t.Context(), "alice", keys)
	require.NoError(t, err)
	for _, r := range rows {
		assert.Equal(t, r.want, got[r.key].Code, "code of %q (%s)", r.reason, r.outcome)
		assert.Equal(t, r.reason, got[r.key].Reason, "the reason text stays")
	}
}

func readMigration(t *testing.T, name string) string {
	t.Helper()
	b, err := migrationsDir.ReadFile("migrations/" + name)
	if err != nil {
		t.Fatal(errors.Join(errors.New("read migration"), err))
	}
	return string(b)
}

// Unreachable tells a database that may come back (the bot waits for it
// at start-up) from one that refused the bot (it stops and says why).
func TestUnreachable(t *testing.T) {
	url := pgtest.URL(t)
	u, err := neturl.Parse(url)
	require.NoError(t, err)
	noDB := *u
	noDB.Path = "/no_such_database"
	closed := *u
	closed.Host = "127.0.0.1:1"
	pgtest.Exec(t, url, `CREATE TABLE migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
		INSERT INTO migrations (version, name) VALUES (99, '099_future.sql')`)
	for _, tt := range []struct {
		name, url string
		want      bool
	}{
		{"nothing listening", closed.String(), true},
		{"no such database", noDB.String(), false},
		{"a newer schema", url, false},
	} {
		_, err := postgres.Open(t.Context(), tt.url, postgres.Options{})
		require.Error(t, err, tt.name)
		assert.Equal(t, tt.want, postgres.Unreachable(err), "Unreachable(%s: %v)", tt.name, err)
	}
}

// bot audit opens the database with Existing: a schema an older binary
// migrated is refused as it is, for the bot to migrate when it starts.
func TestOpenExistingRefusesAnOlderSchemaAndChangesNothing(t *testing.T) {
	url := pgtest.URL(t)
	pgtest.Exec(t, url, readMigration(t, "001_init.sql")+`;
		CREATE TABLE migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
		INSERT INTO migrations (version, name) VALUES (1, '001_init.sql')`)
	tables := count(t, url, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()`)
	_, err := postgres.Open(t.Context(), url, postgres.Options{Existing: true})
	require.ErrorIs(t, err, postgres.ErrSchemaTooOld)
	assert.Contains(t, err.Error(), "start the bot once on it")
	assert.Equal(t, 1, count(t, url, `SELECT count(*) FROM migrations`), "migrations after a refused Open")
	assert.Equal(t, tables, count(t, url, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()`), "tables after a refused Open")
}

// Migrations are applied by number, not after the highest recorded: a
// database that has a later one but not an earlier (branches land in any
// order) gets the earlier one.
func TestOpenAppliesAMigrationMissingBelowTheLatest(t *testing.T) {
	url := pgtest.URL(t)
	files, err := filepath.Glob("migrations/*.sql")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 3)
	skip := filepath.Base(files[len(files)-2])
	var sql strings.Builder
	sql.WriteString(`CREATE TABLE migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());`)
	for _, f := range files {
		name := filepath.Base(f)
		if name == skip {
			continue
		}
		num, _, _ := strings.Cut(name, "_")
		fmt.Fprintf(&sql, "%s;\nINSERT INTO migrations (version, name) VALUES (%s, '%s');\n", readMigration(t, name), strings.TrimLeft(num, "0"), name)
	}
	pgtest.Exec(t, url, sql.String())
	open(t, url, postgres.Options{}).Close()
	assert.Equal(t, len(files), count(t, url, `SELECT count(*) FROM migrations`), "recorded migrations after Open: %s applied too", skip)
}
