// Package sqlite keeps the bot's state in one SQLite file: per-subscription
// cursors and the ledger of reminder keys with their outcomes.
//
// The ledger is what makes delivery exactly-once: a key is claimed (outcome
// "sending") in a transaction before its reminder is sent and settled after,
// and a claim carries an owner and a lease so that two processes sharing one
// database file never both send the same key.
package sqlite

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot/storage/migration"
	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// sqliteHeader starts every SQLite database file.
var sqliteHeader = []byte("SQLite format 3\x00")

// Store is the SQLite-backed state of the bot. It is safe for concurrent use,
// including by several processes on the same file.
type Store struct {
	db    *sql.DB
	path  string
	owner string
	lock  *os.File
	stmt  statements
	// write serialises this Store's write transactions: SQLite has one
	// writer at a time, and writers of one process queueing here cost
	// nothing, where waiting in SQLite's busy handler sleeps and polls.
	write sync.Mutex
}

// Connections kept to the database: enough for the concurrent reads of
// many sweeps, and kept open, since opening one runs the pragmas again.
const poolSize = 8

// ErrNotSQLite is returned by Open when the file exists but is not a SQLite
// database. The file is left untouched.
var ErrNotSQLite = errors.New("not a SQLite database")

// ErrSchemaTooNew is returned by Open when the database was migrated by a
// newer version of the bot. The file is left untouched.
var ErrSchemaTooNew = errors.New("database schema is newer than this binary")

// ErrSchemaTooOld is returned by OpenExisting when the database lacks
// migrations this binary has: the bot itself migrates it when it starts.
// The file is left untouched.
var ErrSchemaTooOld = errors.New("database schema is older than this binary")

// ErrNotMigrated is returned by OpenExisting when there is no ledger at
// the path: no file, or a file the bot has never migrated.
var ErrNotMigrated = errors.New("no ledger there")

// Open opens (creating with mode 0600 if needed) the database at path and
// applies any pending migrations, each once, in a transaction.
//
// A file that is not SQLite, or whose schema is newer than this binary knows,
// gives ErrNotSQLite or ErrSchemaTooNew and is not modified.
func Open(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, false)
}

// OpenExisting opens the database at path as the bot left it, for bot
// audit, which must neither create an empty ledger where the bot's is not
// nor change a schema the running bot may not know yet: a path without a
// database the bot migrated gives ErrNotMigrated, a schema without every
// migration of this binary ErrSchemaTooOld (start the bot once to migrate
// it), a newer one ErrSchemaTooNew; in each case nothing is written.
func OpenExisting(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, true)
}

func open(ctx context.Context, path string, existing bool) (*Store, error) {
	migs, err := migrations()
	if err != nil {
		return nil, err
	}
	missing, err := checkExisting(ctx, path, migs)
	if err != nil {
		return nil, err
	}
	if existing && missing != nil {
		return nil, missing
	}
	if err := createFile(path); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(poolSize)
	db.SetMaxIdleConns(poolSize)
	s := &Store{db: db, path: path, owner: newOwner()}
	if !existing {
		if err := s.migrateWaiting(ctx, migs); err != nil {
			db.Close()
			return nil, err
		}
	}
	if err := s.prepare(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if s.lock, err = lockOwner(path, s.owner); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close releases the database, and with it this Store's claims: another
// process may take over any it left unsettled at once.
func (s *Store) Close() error {
	releaseOwner(s.path, s.lock)
	s.lock = nil
	return s.db.Close()
}

// Owner returns the name under which this Store's claims are held, unique
// to this open Store. Use one Store per process.
func (s *Store) Owner() string { return s.owner }

func newOwner() string {
	host, _ := os.Hostname()
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", sanitize(host), os.Getpid(), hex.EncodeToString(b[:]))
}

// sanitize keeps a name usable as a file name.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

func dsn(path string, readOnly bool) string {
	q := "_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)"
	if readOnly {
		q += "&mode=ro"
	} else {
		// WAL lets readers go on while a writer commits; NORMAL sync in WAL
		// mode keeps every commit across a process crash (SIGKILL), which is
		// the failure the ledger guards against. Immediate transactions take
		// the write lock up front, so two processes never deadlock upgrading.
		q += "&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	}
	return (&url.URL{Scheme: "file", Path: absolute(path), RawQuery: q}).String()
}

// absolute returns path made absolute, so that the file: URI names it
// whatever it starts with ("//" would otherwise read as a host). url.URL
// then escapes what a URI path cannot hold as is ("?", "#", "%", spaces),
// which SQLite decodes back: the database opened is the file at path,
// the one checked and locked, and nothing in its name becomes a parameter.
func absolute(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return filepath.ToSlash(abs)
	}
	return path
}

func createFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("storage: create %s: %w", path, err)
	}
	return f.Close()
}

// checkExisting refuses, without writing, a file that is not SQLite or was
// migrated further than this binary can read. It also returns, as missing,
// why the file is not a database the bot migrated to this binary's schema
// (ErrNotMigrated or ErrSchemaTooOld), which only OpenExisting refuses.
func checkExisting(ctx context.Context, path string, migs []migration.Migration) (missing, err error) {
	notMigrated := fmt.Errorf("storage: %s: %w", path, ErrNotMigrated)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return notMigrated, nil
	}
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", path, err)
	}
	head := make([]byte, len(sqliteHeader))
	n, err := io.ReadFull(f, head)
	f.Close()
	if n == 0 && (err == io.EOF || err == io.ErrUnexpectedEOF) {
		return notMigrated, nil // an empty file is a new database
	}
	if !bytes.Equal(head[:n], sqliteHeader) {
		return nil, fmt.Errorf("storage: %s: %w (move it away or set DATABASE_PATH to another file)", path, ErrNotSQLite)
	}
	db, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", path, err)
	}
	defer db.Close()
	var exists int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'migrations'`).Scan(&exists); err != nil {
		return nil, fmt.Errorf("storage: %s: %w: %v", path, ErrNotSQLite, err)
	}
	if exists == 0 {
		return notMigrated, nil
	}
	applied := map[int]bool{}
	rows, err := db.QueryContext(ctx, `SELECT version FROM migrations`)
	if err != nil {
		return nil, fmt.Errorf("storage: read schema version of %s: %w", path, err)
	}
	defer rows.Close()
	version := 0
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("storage: read schema version of %s: %w", path, err)
		}
		applied[v], version = true, max(version, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: read schema version of %s: %w", path, err)
	}
	if latest := migs[len(migs)-1].Version; version > latest {
		return nil, fmt.Errorf("storage: %s: %w (schema version %d, this binary knows up to %d): run a newer bot", path, ErrSchemaTooNew, version, latest)
	}
	// Migrations are applied each by its number (see migrate), so the
	// schema is older when any one is missing, not only the last.
	for _, m := range migs {
		if !applied[m.Version] {
			return fmt.Errorf("storage: %s: %w (migration %s not applied yet): start the bot once on it, which migrates it, then audit", path, ErrSchemaTooOld, m.Name), nil
		}
	}
	return nil, nil
}

// busyWait bounds how long Open waits for another process that is creating
// the same database.
const busyWait = 15 * time.Second

// migrateWaiting migrates, waiting while another process holds the file:
// switching a new database to WAL takes a lock that SQLite's busy timeout
// does not wait for, so two bots started together on a new file would
// otherwise fail with SQLITE_BUSY.
func (s *Store) migrateWaiting(ctx context.Context, migs []migration.Migration) error {
	deadline := time.Now().Add(busyWait)
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, 500*time.Millisecond) {
		err := s.migrate(ctx, migs)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (5), extended codes
// included.
func isBusy(err error) bool {
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == 5
}

// migrations reads the store's embedded migrations.
func migrations() ([]migration.Migration, error) {
	migs, err := migration.Load(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	return migs, nil
}

func (s *Store) migrate(ctx context.Context, migs []migration.Migration) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_ms INTEGER NOT NULL
	) STRICT`); err != nil {
		return fmt.Errorf("storage: migrate: %w", err)
	}
	for _, m := range migs {
		if err := s.apply(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// apply runs one migration unless it is already recorded; the check, the
// migration and its record share one transaction, so two processes starting
// together apply it once.
func (s *Store) apply(ctx context.Context, m migration.Migration) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storage: migration %s: %w", m.Name, err)
	}
	defer tx.Rollback()
	var done int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM migrations WHERE version = ?`, m.Version).Scan(&done); err != nil {
		return fmt.Errorf("storage: migration %s: %w", m.Name, err)
	}
	if done > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return fmt.Errorf("storage: migration %s: %w", m.Name, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO migrations (version, name, applied_ms) VALUES (?, ?, ?)`,
		m.Version, m.Name, time.Now().UnixMilli()); err != nil {
		return fmt.Errorf("storage: migration %s: %w", m.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("storage: migration %s: %w", m.Name, err)
	}
	return nil
}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}
