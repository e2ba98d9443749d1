package cost

import (
	"log/slog"
	"strings"
	"sync"

	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/monitor"
)

// UsageLimits tells mon and the log of the Calendar budgets the client
// lowered after Google answered a usage limit, and grew back. The log
// says what was reached and the fix once, when a first budget is lowered
// for that limit, not at each halving nor for each user; and once again
// when every budget lowered for it is back at its quota's pace.
type UsageLimits struct {
	cfg config.Config
	mon *monitor.Monitor
	log *slog.Logger

	mu sync.Mutex
	// down holds, by scope and limit, the principals whose budget is below
	// its quota for that limit; lowered, by scope and principal, that
	// limit.
	down    map[string]map[string]bool
	lowered map[string]string
}

// NewUsageLimits returns the UsageLimits of a bot configured with cfg.
func NewUsageLimits(cfg config.Config, mon *monitor.Monitor, log *slog.Logger) *UsageLimits {
	return &UsageLimits{cfg: cfg, mon: mon, log: log, down: map[string]map[string]bool{}, lowered: map[string]string{}}
}

// Changed fits calendar.Config.QuotaChanged.
func (u *UsageLimits) Changed(c calendar.QuotaChange) {
	u.mon.QuotaChanged(c.Scope, c.Principal, c.PerMinute, c.Configured)
	budget := c.Scope + "|" + c.Principal
	u.mu.Lock()
	defer u.mu.Unlock()
	was := u.lowered[budget]
	if c.Limit == "" {
		if c.PerMinute < c.Configured || was == "" {
			return
		}
		delete(u.lowered, budget)
		delete(u.down[was], c.Principal)
		if len(u.down[was]) == 0 {
			u.log.Info("Calendar calls back at their quota's pace", "scope", c.Scope, "limit", strings.TrimPrefix(was, c.Scope+"|"), "per_minute", c.PerMinute)
		}
		return
	}
	key := c.Scope + "|" + string(c.Limit)
	if was == key {
		return // this budget's episode, said already
	}
	if was != "" {
		delete(u.down[was], c.Principal)
	}
	u.lowered[budget] = key
	if u.down[key] == nil {
		u.down[key] = map[string]bool{}
	}
	u.down[key][c.Principal] = true
	if len(u.down[key]) == 1 {
		u.log.Warn(usageLimitFix(u.cfg, c), "scope", c.Scope, "principal", c.Principal, "limit", c.Limit, "reason", c.Reason,
			"per_minute", c.PerMinute, "quota", c.Configured)
	}
}

// usageLimitFix says what Google's answer means for the reminders, and the
// fixes that apply to cfg.
func usageLimitFix(cfg config.Config, c calendar.QuotaChange) string {
	var msg string
	var fixes []string
	spread := []string{}
	if !cfg.Impersonate && cfg.HasServiceAccount() {
		spread = append(spread, "GOOGLE_IMPERSONATE=true (domain-wide delegation: each calendar counts against its owner's per-user quota)")
	}
	spread = append(spread, "people connecting their own accounts (GOOGLE_OAUTH_CLIENT_JSON, /meetingbot connect: each calendar read with its owner's token, against its owner's quota)")
	push := "PUBLIC_URL (push notifications: a calendar is read when it changes, and resynced every " + config.DefaultResyncPush.String() + ")"
	resync := "a longer CALENDAR_RESYNC_INTERVAL (now " + cfg.ResyncInterval.String() + ", at most " + config.MaxResync.String() + ")"
	switch c.Limit {
	case calendar.LimitDaily:
		msg = "Google's daily limit of Calendar requests for the project is reached: until it resets at midnight Pacific time the bot tries one Calendar call a minute " +
			"and reminds from its last reading of each calendar, so changes made meanwhile are seen late"
		if cfg.PublicURL == "" {
			fixes = append(fixes, push)
		}
		fixes = append(fixes, resync,
			"people connecting their own accounts (GOOGLE_OAUTH_CLIENT_JSON, /meetingbot connect: their calendars are read with the OAuth client's tokens, which count against the OAuth client's project when it is another)",
			"a larger daily quota for the project, in the Google Cloud console (APIs & Services > Google Calendar API > Quotas); CALENDAR_DAILY_REQUEST_THRESHOLD says what the bot should plan for")
	case calendar.LimitCalendarUsage:
		msg = "Google's Calendar usage limits are exceeded for " + c.Principal + " (Calendar usage limits exceeded): until they replenish the bot tries one call a minute as that user " +
			"and reminds from its last reading of the calendars it reads as them"
		fixes = append(fixes, spread...)
		if cfg.PublicURL == "" {
			fixes = append(fixes, push)
		}
		fixes = append(fixes, resync)
	default:
		msg = "Google answered a rate limit: Calendar calls slowed down until the answers stop; if this lasts, " + quotaVar(c.Scope) + " is more than the project's quota"
		if c.Scope == "user" {
			fixes = append(fixes, spread...)
		}
		if cfg.PublicURL == "" {
			fixes = append(fixes, push)
		}
		fixes = append(fixes, "a larger quota, asked of Google and set in "+quotaVar(c.Scope))
	}
	return msg + ". Fixes: " + strings.Join(fixes, "; ")
}
