// Package cost is what the bot's Calendar calls cost, and says so. Google
// bills a Cloud project past a daily threshold of Calendar API requests
// ("Daily billing threshold", the Calendar API's usage-limits page, 2026:
// 1,000,000 a day per project, which cannot be raised),
// CALENDAR_DAILY_REQUEST_THRESHOLD, and throttles past its per-minute
// quotas. Spend projects the day against the threshold at start-up, from
// the configuration, and every hour, from the requests made, and says past
// WarnAt what brings it down (docs/operations.md, What Calendar calls
// cost); Demand says when the calendars subscribed need more calls a
// minute than the quota gives; UsageLimits says what Google's usage-limit
// answers mean. bot doctor projects the day with Estimate.
package cost
