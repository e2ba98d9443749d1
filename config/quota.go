package config

import (
	"strconv"
	"strings"
)

// Calendar API quotas: Google sets them per Cloud project, requests a
// minute per project and per user of the project, and changed them on
// 2026-05-01 (projects that used the API between November 2025 and April
// 2026 keep their previous quotas, newer ones get the new ones; a project
// may also have asked for more): "Manage quotas",
// https://developers.google.com/workspace/calendar/api/guides/quota. The
// bot keeps within what the operator says the project has.

const (
	// DefaultQuotaPerMinute is CALENDAR_QUOTA_PER_MINUTE's default: the
	// per-project quota the quota page gives.
	DefaultQuotaPerMinute = 10000
	// DefaultQuotaPerUserPerMinute is CALENDAR_QUOTA_PER_USER_PER_MINUTE's
	// default: the per-user quota the quota page gives.
	DefaultQuotaPerUserPerMinute = 600
	// maxQuota bounds both: a typo of a few zeros would have the bot
	// draw rate-limit answers instead of pacing itself.
	maxQuota = 1_000_000
	// DefaultDailyRequestThreshold is CALENDAR_DAILY_REQUEST_THRESHOLD's
	// default: the Calendar API requests a day a project makes before
	// Google bills it ("Daily billing threshold" on the usage-limits
	// page, 2026: 1,000,000 a day per project; it cannot be raised).
	DefaultDailyRequestThreshold = 1_000_000
	// maxDailyThreshold bounds it, as maxQuota the per-minute ones.
	maxDailyThreshold = 100_000_000
)

// quotas reads CALENDAR_QUOTA_PER_MINUTE,
// CALENDAR_QUOTA_PER_USER_PER_MINUTE and CALENDAR_DAILY_REQUEST_THRESHOLD
// into c.
func (p *parser) quotas(c *Config) {
	c.CalendarQuota = p.quota("CALENDAR_QUOTA_PER_MINUTE", DefaultQuotaPerMinute, "10000")
	c.CalendarUserQuota = p.quota("CALENDAR_QUOTA_PER_USER_PER_MINUTE", DefaultQuotaPerUserPerMinute, "600")
	c.CalendarDailyThreshold = p.dailyThreshold()
}

// dailyThreshold reads CALENDAR_DAILY_REQUEST_THRESHOLD: requests a day, a
// whole number from 1 to maxDailyThreshold.
func (p *parser) dailyThreshold() int {
	const name, example = "CALENDAR_DAILY_REQUEST_THRESHOLD", "1000000"
	v := p.get(name)
	if v == "" {
		return DefaultDailyRequestThreshold
	}
	n, err := strconv.Atoi(strings.ReplaceAll(v, "_", ""))
	switch {
	case err != nil:
		p.bad(name, v, "not a whole number of requests a day, e.g. "+name+"="+example+" (Google's daily billing threshold of the Calendar API)")
	case n < 1:
		p.bad(name, v, "must be at least 1 request a day, e.g. "+name+"="+example)
	case n > maxDailyThreshold:
		p.bad(name, v, "must be at most 100000000 requests a day (is a zero too many?), e.g. "+name+"="+example)
	default:
		return n
	}
	return DefaultDailyRequestThreshold
}

// quota reads a quota: requests a minute, a whole number from 1 to
// maxQuota.
func (p *parser) quota(name string, def int, example string) int {
	v := p.get(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(strings.ReplaceAll(v, "_", ""))
	switch {
	case err != nil:
		p.bad(name, v, "not a whole number of requests a minute, e.g. "+name+"="+example+" (the quota the Google Cloud console shows for the Calendar API)")
	case n < 1:
		p.bad(name, v, "must be at least 1 request a minute, e.g. "+name+"="+example)
	case n > maxQuota:
		p.bad(name, v, "must be at most 1000000 requests a minute (is a zero too many?), e.g. "+name+"="+example)
	default:
		return n
	}
	return def
}
