package main

import (
	"context"
	"log/slog"
	"sync"
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
	return agenda.New(st, &profiles{slack: slack, now: time.Now, ttl: profileTTL}, source, slack, st, agenda.Options{
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

// profileTTL is how long a Slack profile read for the agenda is reused:
// a zone changed in Slack is seen within it, well before the next day's
// agenda.
const profileTTL = 10 * time.Minute

// profiles reads people's Slack profiles (users.info) for the agenda,
// each kept ttl, so that a pass every tick does not call Slack for
// everyone every time.
type profiles struct {
	slack *notify.Slack
	now   func() time.Time
	ttl   time.Duration

	mu    sync.Mutex
	cache map[string]cachedProfile
}

type cachedProfile struct {
	p  agenda.Person
	at time.Time
}

// Person returns the user's profile email and zone.
func (p *profiles) Person(ctx context.Context, userID string) (agenda.Person, error) {
	now := p.now()
	p.mu.Lock()
	c, ok := p.cache[userID]
	p.mu.Unlock()
	if ok && now.Sub(c.at) < p.ttl {
		return c.p, nil
	}
	email, tz, err := p.slack.Profile(ctx, userID)
	if err != nil {
		return agenda.Person{}, err
	}
	person := agenda.Person{Email: email, TZ: tz}
	p.mu.Lock()
	if p.cache == nil {
		p.cache = map[string]cachedProfile{}
	}
	p.cache[userID] = cachedProfile{p: person, at: now}
	p.mu.Unlock()
	return person, nil
}
