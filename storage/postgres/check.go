package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Health is what Check found of a database.
type Health struct {
	// Migrated says the bot has migrated the database's schema before.
	// One it has not is not an error: the bot migrates it when it starts.
	Migrated bool
	// Pending names the migrations of this binary the schema lacks,
	// which the bot applies when it starts.
	Pending []string
	// Schema is the schema the bot's tables are in (search_path).
	Schema string
}

// errProbe ends the probe's transaction: it is rolled back, always.
var errProbe = errors.New("probe rolled back")

// Check connects to the database at rawURL as bot doctor does, leaving it
// as it was: no replica registered, no migration applied. It reports which
// migrations the schema lacks, refuses a schema newer than this binary
// (ErrSchemaTooNew) or none to create the tables in, and checks that the
// bot's user may create a table and write to it, in a transaction that is
// rolled back. Its errors never contain the URL's password; Unreachable
// tells one that may pass from one that refused the bot.
func Check(ctx context.Context, rawURL string) (Health, error) {
	where := Redact(rawURL)
	cfg, err := poolConfig(rawURL)
	if err != nil {
		return Health{}, fmt.Errorf("postgres: %s: %w", where, err)
	}
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return Health{}, fmt.Errorf("postgres: %s: %w", where, err)
	}
	defer pool.Close()
	migs, err := migrations()
	if err != nil {
		return Health{}, err
	}
	var h Health
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var schema *string
		if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
			return err
		}
		if schema == nil {
			return errors.New("no schema to create the tables in: the search_path names none that exists")
		}
		h.Schema = *schema
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
		if latest := migs[len(migs)-1].Version; version > latest {
			return fmt.Errorf("%w (schema %s is at version %d, this binary knows up to %d): run a newer bot", ErrSchemaTooNew, *schema, version, latest)
		}
		h.Migrated = exists
		for _, m := range migs {
			if !applied[m.Version] {
				h.Pending = append(h.Pending, m.Name)
			}
		}
		for _, q := range []string{
			`CREATE TABLE meetingbot_doctor_probe (x integer)`,
			`INSERT INTO meetingbot_doctor_probe (x) VALUES (1)`,
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("cannot create a table and write to it in schema %s: %w", *schema, err)
			}
		}
		return errProbe
	})
	if err != nil && !errors.Is(err, errProbe) {
		return Health{}, fmt.Errorf("postgres: %s: %w", where, err)
	}
	return h, nil
}
