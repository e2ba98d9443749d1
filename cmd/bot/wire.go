package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/audit"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/internal/retry"
	"github.com/meetingbot/meetingbot/mirror"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/scheduler"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// The adapters provide what the engine consumes.
var (
	_ scheduler.Source            = (*calendar.Source)(nil)
	_ scheduler.Notifier          = (*notify.Slack)(nil)
	_ scheduler.Editor            = (*notify.Slack)(nil)
	_ scheduler.DestinationLookup = (*notify.Slack)(nil)
	_ scheduler.Ledger            = (*sqlite.Store)(nil)
	_ audit.Source                = (*calendar.Source)(nil)
	_ audit.Slack                 = (*notify.Slack)(nil)
	_ audit.Ledger                = (*sqlite.Store)(nil)
	_ mirror.Calendar             = calendar.Mirrored{}
	_ mirror.Push                 = calendar.Mirrored{}
)

// rejectedConfig is configuration that parsed but a client refused (say, a
// credentials JSON without a usable private key); like a *config.Error it
// exits 2.
type rejectedConfig struct{ err error }

func (e rejectedConfig) Error() string { return e.err.Error() }
func (e rejectedConfig) Unwrap() error { return e.err }

// observers receive the clients' per-call outcomes; nil ones are skipped.
type observers struct {
	calendar, slack func(call string, class retry.Class)
	quotaWait       func(call string, waited time.Duration)
	quotaChanged    func(calendar.QuotaChange)
}

// httpClients carry the Calendar and the Slack clients' requests; a nil
// one takes the client's default.
type httpClients struct {
	calendar, slack *http.Client
}

// clients builds the Calendar source and the Slack notifier for cfg. It
// makes one request, auth.test, to fail fast on a token Slack rejects;
// Slack being unreachable is only logged.
func clients(ctx context.Context, cfg config.Config, log *slog.Logger, obs observers, late *lateAccounts, hc httpClients) (*calendar.Source, *notify.Slack, error) {
	ccfg := calendar.Config{
		HTTPClient:      hc.calendar,
		CredentialsFile: cfg.CredentialsFile,
		CredentialsJSON: cfg.CredentialsJSON,
		Endpoint:        cfg.GoogleEndpoint,
		Impersonate:     cfg.Impersonate,
		Logger:          log,
		Observe:         obs.calendar,
		QuotaWait:       obs.quotaWait,
		QuotaChanged:    obs.quotaChanged,
		ProjectQuota:    cfg.CalendarQuota,
		UserQuota:       cfg.CalendarUserQuota,
	}
	if late != nil && cfg.GoogleConnect() {
		ccfg.Accounts = late // people's own accounts, see connect.go
	}
	source, err := calendar.New(ctx, ccfg)
	if err != nil {
		return nil, nil, rejectedConfig{err}
	}
	if email := source.ServiceAccountEmail(); email != "" && !cfg.Impersonate {
		log.Info("reading calendars as the service account; share each calendar with it", "service_account", email)
	}
	ncfg := notify.Config{
		HTTPClient: hc.slack,
		Token:      cfg.SlackToken,
		APIURL:     cfg.SlackAPIURL,
		JoinHosts:  cfg.JoinURLHosts,
		Logger:     log,
		Observe:    obs.slack,
		// Self-service answers the snooze buttons' clicks.
		Snooze: cfg.SelfService(),
	}
	slack := notify.New(ncfg)
	if late != nil && cfg.GoogleConnect() && cfg.SelfService() {
		// Going / Maybe / No for people who connected their Google
		// account; self-service answers the clicks (rsvp.go).
		slack.AnswerFor(late.answerable)
	}
	check, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	if err := slack.Check(check); err != nil {
		if meetingbot.IsPermanent(err) {
			return nil, nil, err // it starts with what to do
		}
		log.Warn("Slack unreachable at start-up; reminders will retry", "err", err)
	}
	return source, slack, nil
}

// exitStatus is an exit status chosen by a subcommand that has already
// said why.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// runAudit is `bot audit`: it reads the bot's own configuration and ledger
// and compares them with the calendars and Slack.
func runAudit(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var store interface{ Close() error }
	defer func() {
		if store != nil {
			store.Close()
		}
	}()
	open := func(ctx context.Context) (audit.Deps, error) {
		cfg, err := config.Parse(getenv)
		if err != nil {
			return audit.Deps{}, err
		}
		if cfg.Demo {
			return audit.Deps{}, errors.New("no configuration: audit reads the bot's environment (SLACK_BOT_TOKEN, Google credentials, CALENDARS, DATABASE_PATH or DATABASE_URL)")
		}
		// Auditing must not create an empty ledger where the bot's is not.
		if cfg.DatabaseURL == "" {
			if _, err := os.Stat(cfg.DatabasePath); errors.Is(err, fs.ErrNotExist) {
				return audit.Deps{}, fmt.Errorf("DATABASE_PATH=%q: no ledger there; point it at the bot's database file", cfg.DatabasePath)
			}
		}
		late := accountsFor(cfg)
		source, slack, err := clients(ctx, cfg, newLogger(cfg, stderr), observers{}, late, httpClients{})
		if err != nil {
			return audit.Deps{}, err
		}
		ledger, err := openAuditLedger(ctx, cfg)
		if err != nil {
			return audit.Deps{}, err
		}
		store = ledger
		paused, err := auditConnections(ctx, cfg, ledger, source, late, newLogger(cfg, stderr))
		if err != nil {
			return audit.Deps{}, err
		}
		deps := audit.Deps{
			Subscriptions: cfg.Subscriptions, Source: source, Ledger: ledger, Slack: slack, Interval: cfg.TickInterval,
			Agendas: auditAgendas(cfg, ledger, source, slack), Paused: paused,
		}
		if cfg.SelfService() {
			deps.Timers = ledger // the snoozes people asked for
		}
		if n, ok := ledger.(audit.Notices); ok && cfg.SelfService() && cfg.GoogleConnect() {
			deps.Notices = n // the notices of new invitations
		}
		return deps, nil
	}
	if code := audit.Command(ctx, args, open, stdout, stderr); code != audit.ExitOK {
		return exitStatus(code)
	}
	return nil
}
