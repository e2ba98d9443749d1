package audit

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
)

// DefaultSlackPerMinute bounds the in-bot checks' reads of Slack, after a
// first burst of as many: one of history (conversations.history) per
// subscription, and one of history and one of the profile (users.info) per
// person with a daily agenda. Slack rates conversations.history at Tier 3
// ("50+ per minute") and the notifier shares it to look an unconfirmed
// reminder up before any resend, so the audit takes at most 20 of it: up
// to 100 subscriptions a check still fits in its 5 minutes; past that a
// check takes a minute per 20.
const DefaultSlackPerMinute = 20

// WatcherConfig configures a Watcher. Zero values take the defaults on each
// field.
type WatcherConfig struct {
	Deps
	// Every is how often the check runs; 5m by default.
	Every time.Duration
	// Window is how far back each check looks; 1h by default.
	Window time.Duration
	// Logger receives a warning when a check finds something; discarded if nil.
	Logger *slog.Logger
	// SlackPace spaces the checks' reads of Slack; nil is
	// DefaultSlackPerMinute. A check that takes longer than Window after
	// the last one began reaches back to the last one's window, so that
	// no reminder between them goes unchecked.
	SlackPace *rate.Limiter
}

// Watcher runs the reconciliation inside the bot: every few minutes over
// the last hour, exporting per subscription the gauges
// meetingbot_audit_missing, meetingbot_audit_duplicated and
// meetingbot_audit_late, and logging a warning when one is not zero. Check
// and Run must not be called concurrently.
type Watcher struct {
	cfg                WatcherConfig
	log                *slog.Logger
	missing, dup, late *prometheus.GaugeVec
	// Per subscription, what was last logged, so that a problem seen by
	// every check of the hour is logged once.
	lastWarned, lastErr map[string]string
	// last is when the last check that ended began: its window ended there.
	last time.Time
}

// NewWatcher returns a Watcher for cfg whose gauges are registered on reg,
// each subscription's at 0. It fails when the gauges are already registered.
func NewWatcher(cfg WatcherConfig, reg prometheus.Registerer) (*Watcher, error) {
	if cfg.Source == nil || cfg.Ledger == nil {
		return nil, fmt.Errorf("audit: watcher needs a calendar source and a ledger")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = meetingbot.DefaultTickInterval
	}
	if cfg.Every <= 0 {
		cfg.Every = 5 * time.Minute
	}
	if cfg.Window <= 0 {
		cfg.Window = time.Hour
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SlackPace == nil {
		cfg.SlackPace = rate.NewLimiter(rate.Every(time.Minute/DefaultSlackPerMinute), DefaultSlackPerMinute)
	}
	if cfg.Slack != nil {
		cfg.Slack = pacedSlack{cfg.Slack, cfg.SlackPace}
	}
	if a := cfg.Agendas; a != nil && a.Slack != nil {
		paced := *a
		paced.Slack = pacedAgendaSlack{a.Slack, cfg.SlackPace}
		cfg.Agendas = &paced
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{"subscription"})
	}
	w := &Watcher{
		cfg: cfg, log: log,
		missing:    gauge("meetingbot_audit_missing", "Reminders due in the last audit window and not delivered (skipped, failed or never seen), by subscription."),
		dup:        gauge("meetingbot_audit_duplicated", "Reminders of the last audit window delivered more than once, as Slack shows them, by subscription."),
		late:       gauge("meetingbot_audit_late", "Reminders of the last audit window delivered more than one tick plus 5s after their trigger, by subscription."),
		lastWarned: map[string]string{},
		lastErr:    map[string]string{},
	}
	for _, c := range []prometheus.Collector{w.missing, w.dup, w.late} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("audit: register metrics: %w", err)
		}
	}
	for _, s := range cfg.Subscriptions {
		w.set(s.ID, Counts{})
	}
	return w, nil
}

func (w *Watcher) set(sub string, c Counts) {
	w.missing.WithLabelValues(sub).Set(float64(c.Missing))
	w.dup.WithLabelValues(sub).Set(float64(c.Duplicated))
	w.late.WithLabelValues(sub).Set(float64(c.Late))
}

// Run checks at once and then every Every until ctx ends, and returns then.
func (w *Watcher) Run(ctx context.Context) {
	t := time.NewTicker(w.cfg.Every)
	defer t.Stop()
	for {
		if _, err := w.Check(ctx); err != nil && ctx.Err() == nil {
			w.log.Error("audit check failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Check reconciles the last Window up to now, sets the gauges and logs a
// warning for each subscription whose missing, duplicated or late reminders
// changed and are not all zero. A subscription whose calendar or ledger
// cannot be read keeps its previous gauges and is logged once per error.
// When ctx ends during the check, Check logs nothing and returns its error.
func (w *Watcher) Check(ctx context.Context) (Report, error) {
	now := w.cfg.Now()
	deps := w.cfg.Deps
	deps.Now = func() time.Time { return now }
	from := now.Add(-w.cfg.Window)
	if !w.last.IsZero() && from.After(w.last) {
		from = w.last.Add(-w.cfg.Window) // a gap since the last check: cover it
	}
	r, err := Reconcile(ctx, Input{Deps: deps, From: from, To: now})
	if err != nil {
		return Report{}, err
	}
	if err := ctx.Err(); err != nil {
		// Stopped mid-check: what could not be read says nothing.
		return Report{}, fmt.Errorf("audit: %w", err)
	}
	w.last = now
	for _, s := range r.Subscriptions {
		if s.Error != "" {
			if w.lastErr[s.Subscription] != s.Error {
				w.log.Warn("audit could not check subscription", "subscription", s.Subscription, "err", s.Error)
			}
			w.lastErr[s.Subscription] = s.Error
			continue
		}
		delete(w.lastErr, s.Subscription)
		c := s.Counts()
		w.set(s.Subscription, c)
		problems := describe(s)
		if problems == w.lastWarned[s.Subscription] {
			continue
		}
		w.lastWarned[s.Subscription] = problems
		if problems == "" {
			continue
		}
		w.log.Warn("audit found reminders missing, duplicated or late",
			"subscription", s.Subscription, "missing", c.Missing, "duplicated", c.Duplicated, "late", c.Late,
			"counted_from", s.CountedFrom, "window", w.cfg.Window, "items", problems)
	}
	return r, nil
}

// describe lists a subscription's missing, duplicated and late reminders as
// "missing key (reason); ...", in a stable order, "" when there are none.
func describe(s SubReport) string {
	var parts []string
	for _, l := range []struct {
		status string
		items  []Item
	}{{"missing", s.Missing}, {"duplicated", s.Duplicated}, {"late", s.Late}} {
		for _, it := range l.items {
			parts = append(parts, l.status+" "+it.Key+" ("+it.Reason+")")
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}

// pacedSlack and pacedAgendaSlack wait for the pace before each read of
// Slack.
type pacedSlack struct {
	Slack
	pace *rate.Limiter
}

func (p pacedSlack) Reminders(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Delivery, error) {
	if err := p.pace.Wait(ctx); err != nil {
		return nil, err
	}
	return p.Slack.Reminders(ctx, sub, from, to)
}

type pacedAgendaSlack struct {
	AgendaSlack
	pace *rate.Limiter
}

func (p pacedAgendaSlack) Profile(ctx context.Context, userID string) (email, tz string, err error) {
	if err := p.pace.Wait(ctx); err != nil {
		return "", "", err
	}
	return p.AgendaSlack.Profile(ctx, userID)
}

func (p pacedAgendaSlack) Agendas(ctx context.Context, user string, from, to time.Time) ([]meetingbot.Delivery, error) {
	if err := p.pace.Wait(ctx); err != nil {
		return nil, err
	}
	return p.AgendaSlack.Agendas(ctx, user, from, to)
}
