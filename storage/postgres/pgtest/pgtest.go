// Package pgtest gives each test a PostgreSQL schema of its own on the
// test server, named by MEETINGBOT_TEST_DATABASE_URL or, when it is
// unset, the local one at DefaultURL if it answers, so that tests and
// packages running in parallel never see each other's tables.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the variable that holds the test server's URL, e.g.
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable; .ci/run sets it.
const EnvURL = "MEETINGBOT_TEST_DATABASE_URL"

// URL returns the URL of a new, empty schema on the test server: its
// search_path names the schema and its application_name is the schema's
// name too, so that Terminate finds the connections made with it. The
// schema is dropped when t ends.
//
// URL skips t when there is no test server (see Server), and fails it
// when MEETINGBOT_TEST_DATABASE_URL names one that cannot be reached:
// where the variable is set (CI), the tests must run.
func URL(t testing.TB) string {
	t.Helper()
	base := Server(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "mbtest_" + hex.EncodeToString(b[:])
	admin := connect(t, base)
	defer admin.Close(context.Background())
	if _, err := admin.Exec(t.Context(), `CREATE SCHEMA `+schema); err != nil {
		t.Fatalf("pgtest: create schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("pgtest: drop schema %s: %v", schema, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			t.Errorf("pgtest: drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("pgtest: %s is not a URL", EnvURL)
	}
	q := u.Query()
	q.Set("search_path", schema)
	q.Set("application_name", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// DefaultURL is the test server when MEETINGBOT_TEST_DATABASE_URL is
// unset and a server answers there: a local PostgreSQL with a database
// named test, as .ci/run uses.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// local is whether a server answers at DefaultURL, asked once per process.
var local struct {
	once sync.Once
	err  error
}

// Server returns the test server's URL: MEETINGBOT_TEST_DATABASE_URL, or,
// when it is unset, DefaultURL if a server answers there within a second;
// else it skips t, saying why on one line. A test with subtests calls it
// first, so that it is skipped once.
func Server(t testing.TB) string {
	t.Helper()
	if base := os.Getenv(EnvURL); base != "" {
		return base
	}
	local.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, DefaultURL)
		if err == nil {
			c.Close(ctx)
		}
		local.err = err
	})
	if local.err != nil {
		t.Skip("no PostgreSQL answers at 127.0.0.1:5432 (database test) and " + EnvURL + " is unset: PostgreSQL tests skipped (.ci/run sets it)")
	}
	return DefaultURL
}

// Terminate ends, on the server, every connection made with rawURL (one
// URL returns), as a database restart or a failover does to a client, and
// returns how many it ended.
func Terminate(t testing.TB, rawURL string) int {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatalf("pgtest: terminate: %v", err)
	}
	app := u.Query().Get("application_name")
	if app == "" {
		t.Fatal("pgtest: terminate: the URL has no application_name; use one URL returns")
	}
	c := connect(t, Server(t))
	defer c.Close(context.Background())
	var n int
	if err := c.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
		t.Fatalf("pgtest: terminate %s: %v", app, err)
	}
	return n
}

// Exec runs statements in the schema of rawURL (one URL returns), for a
// test that sets up or inspects what the store cannot.
func Exec(t testing.TB, rawURL, sql string, args ...any) {
	t.Helper()
	c := connect(t, rawURL)
	defer c.Close(context.Background())
	if _, err := c.Exec(t.Context(), sql, args...); err != nil {
		t.Fatalf("pgtest: %v\n%s", err, sql)
	}
}

// Conn opens a connection to rawURL, closed when t ends.
func Conn(t testing.TB, rawURL string) *pgx.Conn {
	t.Helper()
	c := connect(t, rawURL)
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func connect(t testing.TB, rawURL string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, rawURL)
	if err != nil {
		t.Fatalf("pgtest: the test server cannot be reached: %v", err)
	}
	return c
}
