package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/meetingbot/meetingbot/storage/migration"
)

// Health is what Check found of a database.
type Health struct {
	// Migrated says the bot has migrated the database before: a ledger is
	// there. A path with no database yet is not an error: the bot creates
	// it and migrates it when it starts.
	Migrated bool
	// Pending names the migrations of this binary the database lacks,
	// which the bot applies when it starts.
	Pending []string
}

// errProbe ends the probe's transaction: it is rolled back, always.
var errProbe = errors.New("probe rolled back")

// Check looks at the database at path as bot doctor does, leaving it as it
// was: that it is SQLite and its schema not newer than this binary's
// (ErrNotSQLite, ErrSchemaTooNew), which migrations it lacks, and that this
// process can take its write lock and write to it, in a transaction that
// creates a table, inserts a row and is rolled back. A path with no
// database is only checked to be one the bot could create (its directory
// writable: config checks that), and reported with every migration pending.
func Check(ctx context.Context, path string) (Health, error) {
	migs, err := migrations()
	if err != nil {
		return Health{}, err
	}
	missing, err := checkExisting(ctx, path, migs)
	if err != nil {
		return Health{}, err
	}
	if errors.Is(missing, ErrNotMigrated) {
		return Health{Pending: migrationNames(migs)}, nil
	}
	db, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return Health{}, fmt.Errorf("storage: open %s: %w", path, err)
	}
	defer db.Close()
	applied, err := appliedVersions(ctx, db)
	if err != nil {
		return Health{}, fmt.Errorf("storage: read schema version of %s: %w", path, err)
	}
	h := Health{Migrated: true}
	for _, m := range migs {
		if !applied[m.Version] {
			h.Pending = append(h.Pending, m.Name)
		}
	}
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock
	if err != nil {
		return Health{}, fmt.Errorf("storage: %s: cannot take the write lock: %w", path, err)
	}
	defer tx.Rollback()
	for _, q := range []string{
		`CREATE TABLE meetingbot_doctor_probe (x INTEGER)`,
		`INSERT INTO meetingbot_doctor_probe (x) VALUES (1)`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return Health{}, fmt.Errorf("storage: %s: cannot write: %w", path, err)
		}
	}
	if err := tx.Rollback(); err != nil {
		return Health{}, fmt.Errorf("storage: %s: %w: %w", path, errProbe, err)
	}
	return h, nil
}

// appliedVersions reads the migrations the database has.
func appliedVersions(ctx context.Context, db *sql.DB) (map[int]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT version FROM migrations`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	applied := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		applied[v] = true
	}
	return applied, rows.Err()
}

func migrationNames(migs []migration.Migration) []string {
	names := make([]string, len(migs))
	for i, m := range migs {
		names[i] = m.Name
	}
	return names
}
