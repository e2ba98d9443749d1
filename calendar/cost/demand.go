package cost

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/monitor"
)

// quotaVar names the variable of a budget's scope.
func quotaVar(scope string) string {
	if scope == "project" {
		return "CALENDAR_QUOTA_PER_MINUTE"
	}
	return "CALENDAR_QUOTA_PER_USER_PER_MINUTE"
}

// demandEvery is how often the demand on the Calendar quota is counted
// again, as people subscribe and unsubscribe.
const demandEvery = time.Minute

// Demand says, at start-up and whenever it changes side, whether the
// calendars subscribed need more Calendar calls than the quota gives, and
// keeps mon's gauge of it, until ctx ends.
type Demand struct {
	cfg       config.Config
	source    *calendar.Source
	calendars func(ctx context.Context) ([]string, error)
	mon       *monitor.Monitor
	log       *slog.Logger
	over      bool
}

// NewDemand returns the Demand of the calendars calendars lists, as source
// reads them under cfg.
func NewDemand(cfg config.Config, source *calendar.Source, calendars func(ctx context.Context) ([]string, error), mon *monitor.Monitor, log *slog.Logger) *Demand {
	return &Demand{cfg: cfg, source: source, calendars: calendars, mon: mon, log: log}
}

// Check counts the demand once, and says so when it passed the quota or
// came back within it.
func (q *Demand) Check(ctx context.Context) {
	cals, err := q.calendars(ctx)
	if err != nil {
		return // the store's trouble, said by its other readers; the gauge keeps its value
	}
	d := q.source.Demand(ctx, cals, q.cfg.ResyncInterval)
	q.mon.QuotaDemand(d.Ratio())
	switch over := d.Ratio() > 1; {
	case over && !q.over:
		q.log.Warn(overQuota(q.cfg, d), "calendars", d.Calendars, "calls_per_minute", math.Round(d.PerMinute), "quota", d.Quota, "scope", d.Scope, "principal", d.Principal)
	case !over && q.over:
		q.log.Info("the calendars subscribed need no more Calendar calls than the quota gives", "calls_per_minute", math.Round(d.PerMinute), "quota", d.Quota)
	}
	q.over = d.Ratio() > 1
}

// Run checks every demandEvery until ctx ends.
func (q *Demand) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(demandEvery):
			q.Check(ctx)
		}
	}
}

// overQuota says what a demand above the quota costs and what fixes it.
func overQuota(cfg config.Config, d calendar.Demand) string {
	who := "subscribed"
	if d.Scope == "user" {
		who = "read as one Google user (" + d.Principal + ")"
	}
	fixes := []string{}
	if cfg.PublicURL == "" {
		fixes = append(fixes, "PUBLIC_URL (push notifications: a calendar is read when it changes, and resynced every "+config.DefaultResyncPush.String()+")")
	}
	if d.Scope == "user" && !cfg.Impersonate {
		fixes = append(fixes, "GOOGLE_IMPERSONATE=true (domain-wide delegation: each calendar counts against its owner's quota)")
	}
	if d.Scope == "user" {
		fixes = append(fixes, "people connecting their own calendars (GOOGLE_OAUTH_CLIENT_JSON, /meetingbot connect: each counts against its owner's)")
	}
	// A resync that needs four fifths of the quota.
	if fit := time.Duration(math.Ceil(float64(d.Calendars)*60/(0.8*float64(d.Quota)))) * time.Second; fit <= config.MaxResync {
		fixes = append(fixes, fmt.Sprintf("CALENDAR_RESYNC_INTERVAL=%v (about %d calls a minute)", fit, int(math.Round(float64(d.Calendars)*float64(time.Minute)/float64(fit)))))
	}
	fixes = append(fixes, "a larger quota, asked of Google and set in "+quotaVar(d.Scope))
	msg := fmt.Sprintf("the %d calendars %s need about %.0f Calendar calls a minute (a sync of each every CALENDAR_RESYNC_INTERVAL=%v), more than the %d a minute of %s: "+
		"the calendars whose reminders come soonest are read first and the others' reminders go out from their last reading, so their changes are seen later. Fixes: ",
		d.Calendars, who, d.PerMinute, cfg.ResyncInterval, d.Quota, quotaVar(d.Scope))
	for i, f := range fixes {
		if i > 0 {
			msg += "; "
		}
		msg += f
	}
	return msg
}
