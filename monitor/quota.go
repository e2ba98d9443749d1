package monitor

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// quotaMetrics say how the Calendar quota holds: the budgets the client
// lowered after Google answered a rate limit, and how much of the quota
// the calendars subscribed need.
type quotaMetrics struct {
	lowered      *prometheus.GaugeVec
	loweredTotal *prometheus.CounterVec
	demand       prometheus.Gauge
	dailyCalls   prometheus.Gauge
	dailyRatio   prometheus.Gauge

	mu   sync.Mutex
	down map[string]int // by scope|principal, the pace of the budgets below their quota
}

func newQuotaMetrics(reg prometheus.Registerer) *quotaMetrics {
	q := &quotaMetrics{
		lowered: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "meetingbot_calendar_quota_lowered",
			Help: "Calendar budgets the client paces below their quota now, by scope (project, user), after Google answered 403 or 429 usageLimits: each grows back by a quarter a minute without such an answer.",
		}, []string{"scope"}),
		loweredTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meetingbot_calendar_quota_lowered_total",
			Help: "Times a Calendar budget was halved after Google answered 403 or 429 usageLimits, by scope (project, user).",
		}, []string{"scope"}),
		demand: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "meetingbot_calendar_quota_demand_ratio",
			Help: "Calendar calls a minute the calendars subscribed need (one sync each per CALENDAR_RESYNC_INTERVAL) over what the tightest quota gives (CALENDAR_QUOTA_PER_MINUTE, or CALENDAR_QUOTA_PER_USER_PER_MINUTE for one user's calendars). Above 1 the bot reads the calendars whose reminders come soonest first and reminds from its last reading of the others: push (PUBLIC_URL), GOOGLE_IMPERSONATE=true, people connecting their own calendars or a longer CALENDAR_RESYNC_INTERVAL bring it down.",
		}),
		dailyCalls: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "meetingbot_calendar_daily_projection_requests",
			Help: "Calendar API requests the bot projects for a day: at start-up from the configuration (the calendars subscribed, REMINDER_OFFSETS, TICK_INTERVAL, CALENDAR_RESYNC_INTERVAL, push or not), then every hour from the requests it made (the last hour's, or the average since start, whichever is more, times a day). See docs/operations.md, What Calendar calls cost.",
		}),
		dailyRatio: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "meetingbot_calendar_daily_projection_ratio",
			Help: "meetingbot_calendar_daily_projection_requests over CALENDAR_DAILY_REQUEST_THRESHOLD (Google's daily billing threshold, 1,000,000 by default): past 1 Google bills the project; the bot warns past 0.8, with the fix (push with PUBLIC_URL, a longer CALENDAR_RESYNC_INTERVAL).",
		}),
		down: map[string]int{},
	}
	reg.MustRegister(q.lowered, q.loweredTotal, q.demand, q.dailyCalls, q.dailyRatio)
	for _, s := range []string{"project", "user"} {
		q.lowered.WithLabelValues(s)
		q.loweredTotal.WithLabelValues(s)
	}
	return q
}

// QuotaChanged records a Calendar budget lowered or grown back; its
// signature fits calendar.Config.QuotaChanged.
func (m *Monitor) QuotaChanged(scope, principal string, perMinute, configured int) {
	q := m.quota
	q.mu.Lock()
	defer q.mu.Unlock()
	key := scope + "|" + principal
	was, down := q.down[key]
	switch {
	case perMinute >= configured:
		if down {
			delete(q.down, key)
			q.lowered.WithLabelValues(scope).Dec()
		}
		return
	case !down:
		q.lowered.WithLabelValues(scope).Inc()
		fallthrough
	case perMinute < was:
		q.loweredTotal.WithLabelValues(scope).Inc()
	}
	q.down[key] = perMinute
}

// QuotaDemand records what the calendars subscribed need of the Calendar
// quota: calls a minute over what the tightest budget gives.
func (m *Monitor) QuotaDemand(ratio float64) { m.quota.demand.Set(ratio) }

// CalendarDailyProjection records the Calendar requests projected for a
// day, and their ratio to the daily threshold.
func (m *Monitor) CalendarDailyProjection(requests, ratio float64) {
	m.quota.dailyCalls.Set(requests)
	m.quota.dailyRatio.Set(ratio)
}
