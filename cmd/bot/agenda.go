package main

import (
	"log/slog"
	"time"

	"github.com/meetingbot/meetingbot/agenda"
	"github.com/meetingbot/meetingbot/audit"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/monitor"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// The adapters provide what the agenda consumes.
var (
	_ agenda.Settings = (*sqlite.Store)(nil)
	_ agenda.Ledger   = (*sqlite.Store)(nil)
	_ agenda.Calendar = (*calendar.Source)(nil)
	_ agenda.Notifier = (*notify.Slack)(nil)
	_ agenda.Observer = (*monitor.Monitor)(nil)
)

// newAgenda builds the daily agenda's engine over the bot's store,
// Calendar source and Slack notifier, or returns nil when self-service is
// off (people set their agenda with /meetingbot agenda HH:MM).
func newAgenda(cfg config.Config, st store, source *calendar.Source, slack *notify.Slack, mon *monitor.Monitor, log *slog.Logger) (*agenda.Engine, error) {
	if !cfg.SelfService() {
		return nil, nil
	}
	return agenda.New(st, agenda.NewProfiles(slack.Profile, time.Now), source, slack, st, agenda.Options{
		Interval: cfg.TickInterval,
		Logger:   log,
		Observer: mon,
	})
}

// auditAgendas is what the audit reads of the daily agendas, nil when
// self-service (and with it the agenda) is off.
func auditAgendas(cfg config.Config, st agenda.Settings, source *calendar.Source, slack *notify.Slack) *audit.AgendaDeps {
	if !cfg.SelfService() {
		return nil
	}
	return &audit.AgendaDeps{Settings: st, Slack: slack, Source: source}
}
