// Package postgres keeps the bot's state in one PostgreSQL database, so
// that several replicas of the bot can share it: per-subscription cursors,
// the ledger of reminder keys with their outcomes, the self-service
// tables, and the leases by which the replicas share the subscriptions.
//
// It provides what package storage provides for one machine's SQLite file,
// and passes the same contract (storage/storetest). What differs is how a
// claim's owner is known to be alive. SQLite's processes share a machine
// and hold a flock(2) each; replicas share only the database, so each
// keeps a row in the replicas table and beats its heartbeat there (see
// Options.Interval). A claim is another replica's while that replica's
// heartbeat is fresh, or while the claim's lease runs, whichever is
// longer: the lease covers the whole send it guards, so a replica cut off
// from the database, still sending, keeps its claim until the send is
// over. A replica that closes deletes its row and its claims are free at
// once; one that is killed leaves them for its heartbeat and their leases
// to run out.
//
// Share gives each replica its part of the subscriptions: lease rows with
// an owner and an expiry on the database's clock, renewed each round and
// rebalanced under a transaction-scoped advisory lock.
package postgres

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/storage/migration"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// ErrSchemaTooNew is returned by Open when the database was migrated by a
// newer version of the bot. Nothing is changed.
var ErrSchemaTooNew = errors.New("database schema is newer than this binary")

// ErrNotMigrated is returned by Open with Options.Existing when the bot
// has never run on the database.
var ErrNotMigrated = errors.New("no ledger in this database")

// ErrSchemaTooOld is returned by Open with Options.Existing when the
// database lacks migrations this binary has: the bot itself migrates it
// when it starts. Nothing is changed.
var ErrSchemaTooOld = errors.New("database schema is older than this binary")

// LeaseTicks is how many tick intervals (Options.Interval) a replica's
// heartbeat and its subscription leases last without being renewed.
const LeaseTicks = 3

// Options tune a Store. The zero value of each field picks its default.
type Options struct {
	// Interval is the bot's tick interval (TICK_INTERVAL),
	// meetingbot.DefaultTickInterval by default. The replica beats its
	// heartbeat once an interval, and its heartbeat and leases last
	// LeaseTicks intervals: a replica that dies is taken over within
	// about three ticks.
	Interval time.Duration
	// Timeout bounds each call to the database; 15s by default. A
	// database that does not answer fails the call instead of holding the
	// sweep.
	Timeout time.Duration
	// Existing refuses a database the bot has never migrated
	// (ErrNotMigrated) or has migrated to an older schema than this
	// binary's (ErrSchemaTooOld), instead of migrating it: for bot audit,
	// which must neither create an empty ledger where the bot's is not nor
	// change a schema the running replicas may not know yet.
	Existing bool
	// Now, if set, replaces the database's clock for heartbeats, leases
	// and liveness; tests pass a fake one. By default the database's
	// clock decides, so that replicas whose clocks disagree agree on it.
	Now func() time.Time
}

// Store is the PostgreSQL-backed state of the bot. It is safe for
// concurrent use, by several replicas on the same database too. Create it
// with Open; one Store per process.
type Store struct {
	pool    *pgxpool.Pool
	owner   string
	opts    Options
	ttl     time.Duration
	where   string // the database, without credentials, for errors
	stop    chan struct{}
	beating sync.WaitGroup
	closing sync.Once
	closed  error
	// skew is how far the database's clock is ahead of the callers' (in
	// nanoseconds), as the last claim saw it: see noteSkew.
	skew atomic.Int64
	// heldUntil is, on this process's clock, when the heartbeat last
	// written may no longer keep this replica's claims (see Hold).
	holdMu    sync.Mutex
	heldUntil time.Time
}

// Open connects to the database at rawURL (postgres://user:password@host:
// port/dbname?…), applies any pending migrations (once, under an advisory
// lock, so replicas starting together do not race), registers this
// replica and starts its heartbeat.
//
// The URL's password is a secret: no error of this package contains it.
// A schema newer than this binary gives ErrSchemaTooNew and is not
// changed. Parameters the URL does not set get defaults:
// application_name=meetingbot, connect_timeout=10, pool_max_conns=10,
// pool_max_conn_lifetime=10m, pool_max_conn_idle_time=5m. A search_path
// parameter puts the bot's tables in that schema, which must exist.
func Open(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	where := Redact(rawURL)
	cfg, err := poolConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", where, err)
	}
	if opts.Interval <= 0 {
		opts.Interval = meetingbot.DefaultTickInterval
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 15 * time.Second
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", where, err)
	}
	s := &Store{pool: pool, owner: newOwner(), opts: opts, ttl: LeaseTicks * opts.Interval, where: where, stop: make(chan struct{})}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if err := s.beat(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	s.beating.Go(s.heartbeat)
	return s, nil
}

// poolConfig parses rawURL and fills in the defaults Open promises. Its
// errors never quote rawURL: pgx's own redact passwords only on a
// best-effort basis.
func poolConfig(rawURL string) (*pgxpool.Config, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return nil, errors.New("not a postgres://user:password@host:5432/dbname URL")
	}
	q := u.Query()
	for k, v := range map[string]string{
		"application_name": "meetingbot", "connect_timeout": "10", "pool_max_conns": "10",
		// Connections are recycled before proxies in front of managed
		// databases close them (Fly's closes them after 10 minutes).
		"pool_max_conn_lifetime": "10m", "pool_max_conn_idle_time": "5m",
	} {
		if !q.Has(k) {
			q.Set(k, v)
		}
	}
	u.RawQuery = q.Encode()
	cfg, err := pgxpool.ParseConfig(u.String())
	if err != nil {
		var pe *pgconn.ParseConfigError
		if errors.As(err, &pe) {
			return nil, errors.New("the URL's parameters are not valid (see https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-PARAMKEYWORDS)")
		}
		return nil, errors.New("the URL cannot be used")
	}
	return cfg, nil
}

// Redact returns rawURL as it may be shown: scheme, host, port and
// database, without user, password or parameters.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "postgres://…"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// Close ends this replica as a clean exit: it stops its heartbeat, hands
// its subscription leases back and deletes its row, so that the other
// replicas take over its subscriptions on their next round and its claims
// at once (the scheduler has recorded its sends before Close). Calling it
// again does nothing.
func (s *Store) Close() error {
	s.closing.Do(func() {
		close(s.stop)
		s.beating.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `UPDATE subscription_leases SET owner = '', expires_at = `+dbNow+` WHERE owner = $2`, s.now(), s.owner); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `DELETE FROM replicas WHERE owner = $1`, s.owner)
			return err
		})
		if err != nil {
			s.closed = fmt.Errorf("postgres: close replica %s: %w", s.owner, err)
		}
		s.pool.Close()
	})
	return s.closed
}

// closeTimeout bounds Close's hand-back: a database that does not answer
// must not hold up a shutdown that has 10 seconds in all; the leases and
// the heartbeat then run out on their own.
const closeTimeout = 2 * time.Second

// Owner returns the name under which this Store's claims and leases are
// held, unique to this open Store.
func (s *Store) Owner() string { return s.owner }

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: %s: %w", s.where, err)
	}
	return nil
}

func newOwner() string {
	host, _ := os.Hostname()
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// op bounds one call to the database.
func (s *Store) op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.opts.Timeout)
}

// dbNow is the SQL for the instant that decides heartbeats and leases: the
// Options.Now override passed as $1, or the database's clock.
const dbNow = `coalesce($1::timestamptz, now())`

// dbNowMS is dbNow to the millisecond, as every instant of the ledger is
// kept (SQLite keeps them so).
const dbNowMS = `date_trunc('milliseconds', ` + dbNow + `)`

// now returns the Options.Now override as a query argument, nil for the
// database's clock.
func (s *Store) now() any {
	if s.opts.Now == nil {
		return nil
	}
	return s.opts.Now().UTC()
}

// exec runs one statement, again on another connection when the first
// was lost (the server restarted, or ended it) before the statement's
// answer came. Every statement run through it is safe to run twice:
// those that write check the state they change (a claim found already
// made is this replica's own, and gets looked up in Slack before any
// resend).
func (s *Store) exec(ctx context.Context, q string, args ...any) (pgconn.CommandTag, error) {
	for attempt := 1; ; attempt++ {
		tag, err := s.pool.Exec(ctx, q, args...)
		if err == nil || !lostConnection(s.lost(err)) || attempt == maxAttempts || ctx.Err() != nil {
			return tag, err
		}
	}
}

// maxAttempts bounds exec's attempts.
const maxAttempts = 3

// lost returns err, first dropping every pooled connection when err says
// one was lost: after a database restart or a network cut the others are
// gone too, and each would fail a call before the pool noticed (it checks
// only connections idle for a second).
func (s *Store) lost(err error) error {
	if err != nil && lostConnection(err) {
		s.pool.Reset()
	}
	return err
}

// Unreachable reports whether err, from Open, says the database could not
// be reached (no route, no answer, a server still starting or shutting
// down), which may pass, rather than that it refused this bot (a wrong
// password, no such database, a newer schema), which needs an operator.
func Unreachable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "57P") || strings.HasPrefix(pe.Code, "08")
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || lostConnection(err)
}

// lostConnection reports whether err says the connection died under the
// statement: a connection the server ended (SQLSTATE class 57P: operator
// intervention; 08: connection exception) or closed.
func lostConnection(err error) bool {
	var pe *pgconn.PgError
	switch {
	case pgconn.SafeToRetry(err):
		return true
	case errors.As(err, &pe):
		return strings.HasPrefix(pe.Code, "57P") || strings.HasPrefix(pe.Code, "08")
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, pgconn.ErrConnClosed)
}

// migrations reads the store's embedded migrations.
func migrations() ([]migration.Migration, error) {
	migs, err := migration.Load(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return migs, nil
}

// migrate applies the pending migrations in one transaction, each recorded,
// under a transaction-scoped advisory lock on the schema: a replica that
// starts while another migrates waits for it and then finds nothing to do,
// and a replica that dies mid-way leaves nothing half done. A migration
// is pending when its number is not recorded, whatever the numbers that
// are: migrations may reach a database in any order. With
// Options.Existing nothing is applied: a database without every migration
// is refused with ErrSchemaTooOld.
func (s *Store) migrate(ctx context.Context) error {
	migs, err := migrations()
	if err != nil {
		return err
	}
	latest := migs[len(migs)-1].Version
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var schema *string
		if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
			return err
		}
		if schema == nil {
			return errors.New("no schema to create the tables in: the search_path names none that exists")
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.meetingbot_migrations'))`); err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass('migrations') IS NOT NULL`).Scan(&exists); err != nil {
			return err
		}
		applied := map[int]bool{}
		version := 0
		if exists {
			rows, err := tx.Query(ctx, `SELECT version FROM migrations`)
			if err != nil {
				return err
			}
			versions, err := pgx.CollectRows(rows, pgx.RowTo[int32])
			if err != nil {
				return err
			}
			for _, v := range versions {
				applied[int(v)], version = true, max(version, int(v))
			}
		}
		var pending []migration.Migration
		for _, m := range migs {
			if !applied[m.Version] {
				pending = append(pending, m)
			}
		}
		switch {
		case version > latest:
			return fmt.Errorf("%w (schema %s is at version %d, this binary knows up to %d): run a newer bot", ErrSchemaTooNew, *schema, version, latest)
		case len(pending) == 0:
			return nil
		case s.opts.Existing && !exists:
			return fmt.Errorf("%w (schema %s): point DATABASE_URL at the bot's database", ErrNotMigrated, *schema)
		case s.opts.Existing:
			return fmt.Errorf("%w (schema %s: migration %s not applied yet): start the bot once on it, which migrates it, then audit", ErrSchemaTooOld, *schema, pending[0].Name)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS migrations (
			version    integer PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return err
		}
		for _, m := range pending {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: %s: migrate: %w", s.where, err)
	}
	return nil
}
