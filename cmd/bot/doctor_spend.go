package main

import (
	"context"
	"fmt"
	"strings"
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
		est := estimateDay(d.cfg, n, false)
		threshold := float64(d.cfg.CalendarDailyThreshold)
		ratio := est.Total() / threshold
		detail := fmt.Sprintf("about %s Calendar requests a day for %s of CALENDARS (%s each: %s), %.1f%% of CALENDAR_DAILY_REQUEST_THRESHOLD (%s)",
			count(est.Total()), calendarsOf(n), count(est.PerCalendar()), breakdown(est), 100*ratio, count(threshold))
		if d.cfg.PublicURL == "" && n > 0 {
			detail += fmt.Sprintf("; without push each calendar costs a sync every CALENDAR_RESYNC_INTERVAL (%v), with PUBLIC_URL about %s a day",
				d.cfg.ResyncInterval, count(estimateDay(d.cfg, n, true).PerCalendar()))
		}
		if d.cfg.SelfService() {
			detail += "; the calendars people subscribe in Slack come on top"
		}
		if ratio > warnAt {
			return fail(detail+": past 80%, and past 100% Google bills the project", strings.Join(spendFixes(d.cfg, n, threshold), "; "))
		}
		return pass("%s", detail)
	}}}
}
