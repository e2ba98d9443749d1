package main

import (
	"context"
	"github.com/meetingbot/meetingbot/agenda"
	"log/slog"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/audit"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/mirror"
	"github.com/meetingbot/meetingbot/monitor"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/scheduler"
	"github.com/meetingbot/meetingbot/selfservice"
	"github.com/meetingbot/meetingbot/storage"
	"github.com/meetingbot/meetingbot/storage/postgres"
)

// store is where the bot keeps its state: one machine's SQLite file
// (DATABASE_PATH), or a PostgreSQL database several replicas share
// (DATABASE_URL).
type store interface {
	scheduler.Ledger
	audit.Ledger
	monitor.Counter
	selfservice.Store
	agenda.Settings
	mirror.Store
	snoozeStore
	notify.ChannelNames
	Close() error
}

// Both stores provide everything the bot reads and writes; PostgreSQL's
// claims are held by its replicas' heartbeats.
var (
	_ store            = (*storage.Store)(nil)
	_ store            = (*postgres.Store)(nil)
	_ scheduler.Holder = (*postgres.Store)(nil)
)

// shareFunc is a replica's share of the subscriptions, as
// scheduler.Options.Share asks for it.
type shareFunc = func(ctx context.Context, subs []meetingbot.Subscription) ([]meetingbot.Subscription, error)

// openStore opens the state cfg names. With PostgreSQL it also returns
// the replica's share, which tells mon what the replica holds at every
// round; with SQLite the share is nil: one machine sweeps everything.
func openStore(ctx context.Context, cfg config.Config, mon *monitor.Monitor, log *slog.Logger) (store, shareFunc, error) {
	if cfg.DatabaseURL == "" {
		s, err := storage.Open(ctx, cfg.DatabasePath)
		return s, nil, err
	}
	s, err := openPostgres(ctx, cfg, log)
	if err != nil || s == nil {
		return nil, nil, err
	}
	log.Info("state in PostgreSQL: the subscriptions are shared with the other replicas there",
		"db", config.RedactURL(cfg.DatabaseURL), "replica", s.Owner(), "lease", postgres.LeaseTicks*cfg.TickInterval)
	share := func(ctx context.Context, subs []meetingbot.Subscription) ([]meetingbot.Subscription, error) {
		mine, err := s.Share(ctx, subs)
		ids := make([]string, len(mine))
		for i, sub := range mine {
			ids[i] = sub.ID
		}
		if err == nil || ctx.Err() == nil {
			mon.Leases(ids, len(subs), err)
		}
		return mine, err
	}
	return s, share, nil
}

// claimLease is how long a claim on a reminder keeps other processes off
// its key when its owner cannot be told alive. With SQLite, where flock(2)
// tells it, the scheduler's default. With PostgreSQL a replica's claims
// are its own while its heartbeat is fresh (postgres.LeaseTicks ticks
// from its last beat), and Hold cuts a send the heartbeat no longer
// covers (scheduler.Holder), so the lease need only outlast a tick: a
// replica killed mid-send leaves its claims to the others as soon as its
// heartbeat runs out, within that span (looked up in Slack, then sent
// late if the meeting has not started), where a longer lease kept them
// off the key past the meeting's start.
func claimLease(cfg config.Config) time.Duration {
	if cfg.DatabaseURL == "" {
		return 0
	}
	return cfg.TickInterval
}

// Start-up waits for a database it cannot reach, from startRetry to
// maxStartRetry between attempts: replicas and their database often start
// together, and a machine that exits instead is restarted only so many
// times.
const (
	startRetry    = time.Second
	maxStartRetry = 30 * time.Second
)

// openPostgres opens the PostgreSQL store, waiting while the database
// cannot be reached (see waitPostgres). It returns nil, nil when ctx ends
// first.
func openPostgres(ctx context.Context, cfg config.Config, log *slog.Logger) (*postgres.Store, error) {
	return waitPostgres(ctx, cfg, log, realStartWaits)
}

// openAuditLedger opens the ledger for bot audit. A database the bot has
// never run on, or has run on with an older binary, is refused, not
// migrated: auditing must neither create an empty ledger where the bot's
// is not nor change the schema under the bot that runs on it.
func openAuditLedger(ctx context.Context, cfg config.Config) (interface {
	audit.Ledger
	audit.Timers
	agenda.Settings
	Close() error
}, error) {
	if cfg.DatabaseURL != "" {
		return postgres.Open(ctx, cfg.DatabaseURL, postgres.Options{Interval: cfg.TickInterval, Existing: true})
	}
	return storage.OpenExisting(ctx, cfg.DatabasePath)
}
