package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/internal/retry"
	"github.com/meetingbot/meetingbot/storage/postgres"
)

// The first hour with a database of one's own: what start-up says when
// DATABASE_URL names a database that does not exist, or one that cannot be
// reached.

// unreachableAlarm is how long start-up waits for a database it cannot
// reach before it says so at ERROR: a replica and its database often
// start together, but a minute is long enough for a wrong host to show.
const unreachableAlarm = time.Minute

// startWaits times the start-up's waits for the database; tests pass a
// fake clock.
type startWaits struct {
	first, max, alarm time.Duration
	now               func() time.Time
	sleep             func(ctx context.Context, d time.Duration) error
}

var realStartWaits = startWaits{first: startRetry, max: maxStartRetry, alarm: unreachableAlarm, now: time.Now, sleep: retry.Sleep}

// waitPostgres opens the PostgreSQL store, waiting while the database
// cannot be reached: each attempt that fails is logged at WARN, and once,
// after w.alarm, an ERROR names the host the bot keeps trying, since a
// wrong one is retried forever. A database that refuses the bot stops it,
// with the fix when it is one this knows (one that does not exist). It
// returns nil, nil when ctx ends first.
func waitPostgres(ctx context.Context, cfg config.Config, log *slog.Logger, w startWaits) (*postgres.Store, error) {
	var failing time.Time
	alarmed := false
	for wait := w.first; ; wait = min(2*wait, w.max) {
		s, err := postgres.Open(ctx, cfg.DatabaseURL, postgres.Options{Interval: cfg.TickInterval})
		if err == nil || !postgres.Unreachable(err) || ctx.Err() != nil {
			if ctx.Err() != nil && s == nil {
				return nil, nil
			}
			return s, databaseStartError(cfg.DatabaseURL, err)
		}
		now := w.now()
		if failing.IsZero() {
			failing = now
		}
		db := config.RedactURL(cfg.DatabaseURL)
		if !alarmed && now.Sub(failing) >= w.alarm {
			alarmed = true
			log.Error("database still unreachable; the bot keeps retrying and sends nothing until it answers: check the host and port in DATABASE_URL, and that PostgreSQL runs and accepts connections from here",
				"host", databaseHost(cfg.DatabaseURL), "db", db, "for", now.Sub(failing).Round(time.Second), "err", err)
		}
		log.Warn("database unreachable at start-up; retrying", "db", db, "in", wait, "err", err)
		if w.sleep(ctx, wait) != nil {
			return nil, nil
		}
	}
}

// databaseStartError adds to err, from opening the database at rawURL,
// what to do about it when that is known: a database that does not exist
// (SQLSTATE 3D000, invalid_catalog_name) is made with createdb.
func databaseStartError(rawURL string, err error) error {
	var pe *pgconn.PgError
	if err == nil || !errors.As(err, &pe) || pe.Code != "3D000" {
		return err
	}
	return fmt.Errorf("DATABASE_URL names a database that does not exist: %s, then start the bot, which creates its tables: %w", createdbFix(rawURL), err)
}

// createdbFix says how to create the database rawURL names.
func createdbFix(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "create it (createdb)"
	}
	name := strings.TrimPrefix(u.Path, "/")
	args := []string{"createdb"}
	if h := u.Hostname(); h != "" {
		args = append(args, "-h", h)
	}
	if p := u.Port(); p != "" {
		args = append(args, "-p", p)
	}
	if user := u.User.Username(); user != "" {
		args = append(args, "-U", user)
	}
	args = append(args, name)
	return fmt.Sprintf("create it (%s, or CREATE DATABASE %s as a user who may)", strings.Join(args, " "), name)
}

// databaseHost is the host:port of rawURL, for a log line.
func databaseHost(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		return u.Host
	}
	return ""
}
