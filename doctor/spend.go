package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/meetingbot/meetingbot/calendar/cost"
)

// spendChecks project the day of Calendar requests of the calendars in
// CALENDARS against CALENDAR_DAILY_REQUEST_THRESHOLD, as the bot does at
// start-up (spend.go): past 80% the line fails, with what brings it
// down.
func spendChecks(d *doctorEnv) []check {
	return []check{{"Calendar daily projection", func(context.Context) outcome {
		seen := map[string]bool{}
		for _, s := range d.cfg.Subscriptions {
			seen[s.CalendarID] = true
		}
		n := len(seen)
		est := cost.Estimate(d.cfg, n, false)
		threshold := float64(d.cfg.CalendarDailyThreshold)
		ratio := est.Total() / threshold
		detail := fmt.Sprintf("about %s Calendar requests a day for %s of CALENDARS (%s each: %s), %.1f%% of CALENDAR_DAILY_REQUEST_THRESHOLD (%s)",
			cost.Count(est.Total()), cost.CalendarsOf(n), cost.Count(est.PerCalendar()), cost.Breakdown(est), 100*ratio, cost.Count(threshold))
		if d.cfg.PublicURL == "" && n > 0 {
			detail += fmt.Sprintf("; without push each calendar costs a sync every CALENDAR_RESYNC_INTERVAL (%v), with PUBLIC_URL about %s a day",
				d.cfg.ResyncInterval, cost.Count(cost.Estimate(d.cfg, n, true).PerCalendar()))
		}
		if d.cfg.SelfService() {
			detail += "; the calendars people subscribe in Slack come on top"
		}
		if ratio > cost.WarnAt {
			return fail(detail+": past 80%, and past 100% Google bills the project", strings.Join(cost.Fixes(d.cfg, n, threshold), "; "))
		}
		return pass("%s", detail)
	}}}
}
