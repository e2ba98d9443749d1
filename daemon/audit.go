package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/agenda"
	"github.com/meetingbot/meetingbot/audit"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/storage/postgres"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// auditLedger is what bot audit reads of the bot's store.
type auditLedger interface {
	audit.Ledger
	audit.Timers
	audit.Notices
	audit.Channels
	audit.ConnectionsStore
	agenda.Settings
	Close() error
}

var (
	_ auditLedger = (*sqlite.Store)(nil)
	_ auditLedger = (*postgres.Store)(nil)
)

// Audit builds what `bot audit` reads for cfg, the bot's own
// configuration: the clients the bot reads and posts with, people's
// accounts read-only (it changes no connection of the live bot's), and the
// ledger, which it refuses to create where the bot's is not, or to migrate
// under a bot that runs on it. The caller closes what it returns.
func Audit(ctx context.Context, cfg config.Config, log *slog.Logger) (audit.Deps, func() error, error) {
	if cfg.Demo {
		return audit.Deps{}, nil, errors.New("no configuration: audit reads the bot's environment (SLACK_BOT_TOKEN, Google credentials, CALENDARS, DATABASE_PATH or DATABASE_URL)")
	}
	// Auditing must not create an empty ledger where the bot's is not.
	if cfg.DatabaseURL == "" {
		if _, err := os.Stat(cfg.DatabasePath); errors.Is(err, fs.ErrNotExist) {
			return audit.Deps{}, nil, fmt.Errorf("DATABASE_PATH=%q: no ledger there; point it at the bot's database file", cfg.DatabasePath)
		}
	}
	b := &Bot{cfg: cfg, log: log}
	if cfg.HasServiceAccount() {
		if err := calendar.CheckCredentials(ctx, b.calendarConfig()); err != nil {
			return audit.Deps{}, nil, config.Rejected(err)
		}
	}
	b.slack = notify.New(notifyConfig(cfg, nil, log, nil))
	b.api = slackAPI(cfg, nil)
	check, cancel := context.WithTimeout(ctx, checkTimeout)
	err := b.slack.Check(check)
	cancel()
	switch {
	case err != nil && meetingbot.IsPermanent(err):
		return audit.Deps{}, nil, err
	case err != nil:
		log.Warn("Slack unreachable at start-up; reminders will retry", "err", err)
	}
	ledger, err := openAuditLedger(ctx, cfg)
	if err != nil {
		return audit.Deps{}, nil, err
	}
	deps, err := b.auditDeps(ctx, ledger)
	if err != nil {
		ledger.Close()
		return audit.Deps{}, nil, err
	}
	return deps, ledger.Close, nil
}

// auditDeps reads the calendars with people's accounts, read-only, where
// they connected one, and lists what a stopped connection pauses.
func (b *Bot) auditDeps(ctx context.Context, ledger auditLedger) (audit.Deps, error) {
	cfg := b.cfg
	ccfg := b.calendarConfig()
	deps := audit.Deps{Subscriptions: cfg.Subscriptions, Ledger: ledger, Slack: b.slack, Interval: cfg.TickInterval}
	if store, ok := ledger.(Store); ok && (cfg.GoogleConnect() || cfg.SlackConnect()) {
		b.store = store
		a, err := b.accountsFor(ctx, prometheus.NewRegistry(), true)
		if err != nil {
			return audit.Deps{}, err
		}
		if cfg.GoogleConnect() {
			ccfg.Accounts = a
		}
		deps.Paused = audit.PausedConnections(ledger)
	}
	source, err := calendar.New(ctx, ccfg)
	if err != nil {
		return audit.Deps{}, config.Rejected(err)
	}
	deps.Source = source
	deps.Agendas = b.auditAgendas(source, ledger)
	if cfg.SelfService() {
		deps.Timers = ledger   // the snoozes people asked for
		deps.Channels = ledger // the channels' change notices and agendas
	}
	if cfg.SelfService() && cfg.GoogleConnect() {
		deps.Notices = ledger // the notices of new invitations
	}
	return deps, nil
}

// openAuditLedger opens the ledger for bot audit. A database the bot has
// never run on, or has run on with an older binary, is refused, not
// migrated: auditing must neither create an empty ledger where the bot's
// is not nor change the schema under the bot that runs on it.
func openAuditLedger(ctx context.Context, cfg config.Config) (auditLedger, error) {
	if cfg.DatabaseURL != "" {
		return postgres.Open(ctx, cfg.DatabaseURL, postgres.Options{Interval: cfg.TickInterval, Existing: true})
	}
	return sqlite.OpenExisting(ctx, cfg.DatabasePath)
}
