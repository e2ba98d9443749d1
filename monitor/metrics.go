package monitor

import (
	"github.com/meetingbot/meetingbot"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the bot's Prometheus collectors, on a registry of their own.
type metrics struct {
	reg *prometheus.Registry

	sent          prometheus.Counter
	skipped       *prometheus.CounterVec
	failed        *prometheus.CounterVec
	late          prometheus.Counter
	lateness      prometheus.Histogram
	tickDuration  prometheus.Histogram
	calendarCalls *prometheus.CounterVec
	calendarErrs  *prometheus.CounterVec
	slackCalls    *prometheus.CounterVec
	slackErrs     *prometheus.CounterVec
	subscriptions prometheus.Gauge
	lastSuccess   *prometheus.GaugeVec
	ledgerRows    prometheus.Gauge
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		sent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "meetingbot_reminders_sent_total",
			Help: "Reminders Slack accepted.",
		}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meetingbot_reminders_skipped_total",
			Help: "Due reminders not sent, by reason (started: the meeting had begun; no_longer_due: an interrupted send whose meeting moved away).",
		}, []string{"reason"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meetingbot_reminders_failed_total",
			Help: "Failed deliveries, by class: permanent (needs an operator, not retried) or transient (retried next tick).",
		}, []string{"class"}),
		late: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "meetingbot_reminders_late_total",
			Help: "Reminders sent after their trigger time had passed (bot down, meeting created or moved late).",
		}),
		lateness: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "meetingbot_reminder_lateness_seconds",
			Help:    "Seconds from a sent reminder's trigger time to Slack accepting it.",
			Buckets: []float64{0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600},
		}),
		tickDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "meetingbot_tick_duration_seconds",
			Help:    "Duration of one sweep of every subscription.",
			Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}),
		calendarCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meetingbot_calendar_calls_total",
			Help: "Google Calendar API attempts, by call and outcome class.",
		}, []string{"call", "class"}),
		calendarErrs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meetingbot_calendar_errors_total",
			Help: "Google Calendar API attempts that failed, by call and error class.",
		}, []string{"call", "class"}),
		slackCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meetingbot_slack_calls_total",
			Help: "Slack Web API attempts, by method and outcome class.",
		}, []string{"call", "class"}),
		slackErrs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meetingbot_slack_errors_total",
			Help: "Slack Web API attempts that failed, by method and error class.",
		}, []string{"call", "class"}),
		subscriptions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "meetingbot_subscriptions",
			Help: "Configured subscriptions (CALENDARS entries).",
		}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "meetingbot_subscription_last_success_timestamp_seconds",
			Help: "Unix time of each subscription's last complete sweep.",
		}, []string{"subscription"}),
		ledgerRows: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "meetingbot_ledger_rows",
			Help: "Rows in the reminder ledger, refreshed periodically.",
		}),
	}
	m.reg.MustRegister(m.sent, m.skipped, m.failed, m.late, m.lateness, m.tickDuration,
		m.calendarCalls, m.calendarErrs, m.slackCalls, m.slackErrs,
		m.subscriptions, m.lastSuccess, m.ledgerRows,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Series that exist from the start, so that rate() and alerts see a 0
	// rather than nothing.
	m.skipped.WithLabelValues("started")
	m.failed.WithLabelValues("permanent")
	m.failed.WithLabelValues("transient")
	return m
}

// skipLabel maps a ledger entry's reason code to a label value.
func skipLabel(code meetingbot.ReasonCode) string {
	switch code {
	case meetingbot.ReasonStarted, meetingbot.ReasonNoLongerDue, meetingbot.ReasonSubscriptionRemoved:
		return string(code)
	default:
		return "other"
	}
}
