package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/meetingbot/meetingbot/internal/retry"
)

// The first hour with a database of one's own: what start-up says when
// DATABASE_URL names a database that does not exist, or one that cannot be
// reached, while it waits for it.

// unreachableAlarm is how long start-up waits for a database it cannot
// reach before it says so at ERROR: a replica and its database often
// start together, but a minute is long enough for a wrong host to show.
const unreachableAlarm = time.Minute

// Start-up waits for a database it cannot reach, from startRetry to
// maxStartRetry between attempts: replicas and their database often start
// together, and a machine that exits instead is restarted only so many
// times.
const (
	startRetry    = time.Second
	maxStartRetry = 30 * time.Second
)

// Waits times OpenWaiting's waits for the database; the zero value is the
// real one, and tests pass a fake clock.
type Waits struct {
	// First and Max bound the wait between attempts, which doubles from
	// First (1s) to Max (30s); Alarm is how long the database may not
	// answer before it is said at ERROR (a minute).
	First, Max, Alarm time.Duration
	// Now and Sleep are the clock: time.Now and a sleep that ends with
	// ctx by default.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

func (w Waits) orDefaults() Waits {
	w.First = cmp.Or(w.First, startRetry)
	w.Max = cmp.Or(w.Max, maxStartRetry)
	w.Alarm = cmp.Or(w.Alarm, unreachableAlarm)
	if w.Now == nil {
		w.Now = time.Now
	}
	if w.Sleep == nil {
		w.Sleep = retry.Sleep
	}
	return w
}

// OpenWaiting opens the store at rawURL as Open does, waiting while the
// database cannot be reached: each attempt that fails is logged at WARN,
// and once, after w.Alarm, an ERROR names the host the bot keeps trying,
// since a wrong one is retried forever. A database that refuses the bot
// stops it, with the fix when it is one this knows (one that does not
// exist). It returns nil, nil when ctx ends first.
func OpenWaiting(ctx context.Context, rawURL string, opts Options, log *slog.Logger, w Waits) (*Store, error) {
	w = w.orDefaults()
	var failing time.Time
	alarmed := false
	for wait := w.First; ; wait = min(2*wait, w.Max) {
		s, err := Open(ctx, rawURL, opts)
		if err == nil || !Unreachable(err) || ctx.Err() != nil {
			if ctx.Err() != nil && s == nil {
				return nil, nil
			}
			return s, startError(rawURL, err)
		}
		now := w.Now()
		if failing.IsZero() {
			failing = now
		}
		db := Redact(rawURL)
		if !alarmed && now.Sub(failing) >= w.Alarm {
			alarmed = true
			log.Error("database still unreachable; the bot keeps retrying and sends nothing until it answers: check the host and port in DATABASE_URL, and that PostgreSQL runs and accepts connections from here",
				"host", host(rawURL), "db", db, "for", now.Sub(failing).Round(time.Second), "err", err)
		}
		log.Warn("database unreachable at start-up; retrying", "db", db, "in", wait, "err", err)
		if w.Sleep(ctx, wait) != nil {
			return nil, nil
		}
	}
}

// startError adds to err, from opening the database at rawURL,
// what to do about it when that is known: a database that does not exist
// (SQLSTATE 3D000, invalid_catalog_name) is made with createdb.
func startError(rawURL string, err error) error {
	var pe *pgconn.PgError
	if err == nil || !errors.As(err, &pe) || pe.Code != "3D000" {
		return err
	}
	return fmt.Errorf("DATABASE_URL names a database that does not exist: %s, then start the bot, which creates its tables: %w", CreatedbFix(rawURL), err)
}

// CreatedbFix says how to create the database rawURL names, for one that
// does not exist (SQLSTATE 3D000).
func CreatedbFix(rawURL string) string {
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

// host is the host:port of rawURL, for a log line.
func host(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		return u.Host
	}
	return ""
}
