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
	sweepDuration prometheus.Histogram
	tickInterval  prometheus.Gauge
	timersArmed   prometheus.Gauge
	checks        *prometheus.CounterVec
	readsInFlight prometheus.Gauge
	quotaWait     *prometheus.CounterVec
	edits         *prometheus.CounterVec
	agendas       *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.reminderMetrics()
	m.sweepMetrics()
	m.apiMetrics()
	m.agendas = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "meetingbot_agendas_total",
		Help: "Daily agendas settled, by outcome: sent (on time), late (sent after HH:MM, the bot down or stalled then), no_meetings (a day without meetings: nothing sent), after_noon (skipped: the bot was down from HH:MM past local noon), agenda_off (an interrupted send of an agenda turned off since, not found in Slack), failed_permanent, failed_transient (retried at the next pass).",
	}, []string{"outcome"})
	m.reg.MustRegister(m.agendas)
	m.reg.MustRegister(m.sent, m.skipped, m.failed, m.late, m.lateness, m.tickDuration,
		m.calendarCalls, m.calendarErrs, m.slackCalls, m.slackErrs,
		m.subscriptions, m.lastSuccess, m.ledgerRows,
		m.sweepDuration, m.tickInterval, m.timersArmed, m.checks, m.readsInFlight, m.quotaWait, m.edits,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Series that exist from the start, so that rate() and alerts see a 0
	// rather than nothing.
	m.skipped.WithLabelValues("started")
	m.failed.WithLabelValues("permanent")
	m.failed.WithLabelValues("transient")
	for _, o := range []string{"sent", "late", "no_meetings", "after_noon", "failed_permanent", "failed_transient"} {
		m.agendas.WithLabelValues(o)
	}
	for _, o := range []meetingbot.CheckOutcome{meetingbot.CheckConfirmed, meetingbot.CheckMoved, meetingbot.CheckCancelled, meetingbot.CheckChanged, meetingbot.CheckUnknown} {
		m.checks.WithLabelValues(string(o))
	}
	for _, k := range []meetingbot.EditKind{meetingbot.EditMoved, meetingbot.EditCancelled, meetingbot.EditDeclined, meetingbot.EditRestored} {
		m.edits.WithLabelValues(string(k))
	}
	return m
}

// reminderMetrics makes the metrics of the reminders: sent, skipped, failed, late, edited, and the checks before them.
func (m *metrics) reminderMetrics() {
	m.sent = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "meetingbot_reminders_sent_total",
		Help: "Reminders Slack accepted.",
	})
	m.skipped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "meetingbot_reminders_skipped_total",
		Help: "Due reminders not sent, by reason (started: the meeting had begun; no_longer_due: an interrupted send whose meeting moved away).",
	}, []string{"reason"})
	m.failed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "meetingbot_reminders_failed_total",
		Help: "Failed deliveries, by class: permanent (needs an operator, not retried) or transient (retried next tick).",
	}, []string{"class"})
	m.late = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "meetingbot_reminders_late_total",
		Help: "Reminders sent after their trigger time had passed (bot down, meeting created or moved late).",
	})
	m.lateness = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "meetingbot_reminder_lateness_seconds",
		Help:    "Seconds from a sent reminder's trigger time to Slack accepting it.",
		Buckets: []float64{0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600},
	})
	m.checks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "meetingbot_fire_checks_total",
		Help: "Checks of a meeting against the calendar just before its planned reminder, by outcome: confirmed (sent), moved or cancelled (not sent), unknown (sent on the last sweep's reading).",
	}, []string{"outcome"})
	m.edits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "meetingbot_reminder_edits_total",
		Help: "Sent reminders edited because their meeting changed, by kind: moved (to another start), cancelled, declined (by the calendar's owner: \"You declined\"), restored (moved back to the time reminded, or accepted again).",
	}, []string{"kind"})
}

// sweepMetrics makes the metrics of the sweeps: their rounds and durations, the timers armed, the reads in flight, the subscriptions and their last success, the ledger.
func (m *metrics) sweepMetrics() {
	m.tickDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "meetingbot_tick_duration_seconds",
		Help:    "Duration of one round: starting a sweep of every subscription.",
		Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
	})
	m.sweepDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "meetingbot_sweep_duration_seconds",
		Help:    "Duration of one subscription's sweep: its calendar read, the sends it found due, its plan; compare with meetingbot_tick_interval_seconds.",
		Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120},
	})
	m.tickInterval = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "meetingbot_tick_interval_seconds",
		Help: "TICK_INTERVAL: how often each subscription is swept.",
	})
	m.timersArmed = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "meetingbot_timers_armed",
		Help: "Reminders planned on a timer to go out at their trigger instant.",
	})
	m.readsInFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "meetingbot_calendar_reads_in_flight",
		Help: "Calendar reads of sweeps in flight.",
	})
	m.quotaWait = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "meetingbot_calendar_quota_wait_seconds_total",
		Help: "Seconds Calendar calls waited for the client-side quota budget, by call: when it grows, sweeps stretch beyond TICK_INTERVAL.",
	}, []string{"call"})
	m.subscriptions = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "meetingbot_subscriptions",
		Help: "Configured subscriptions (CALENDARS entries).",
	})
	m.lastSuccess = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "meetingbot_subscription_last_success_timestamp_seconds",
		Help: "Unix time of each subscription's last complete sweep.",
	}, []string{"subscription"})
	m.ledgerRows = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "meetingbot_ledger_rows",
		Help: "Rows in the reminder ledger, refreshed periodically.",
	})
}

// apiMetrics makes the metrics of the calls to Google Calendar and Slack, by outcome.
func (m *metrics) apiMetrics() {
	m.calendarCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "meetingbot_calendar_calls_total",
		Help: "Google Calendar API attempts, by call and outcome class.",
	}, []string{"call", "class"})
	m.calendarErrs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "meetingbot_calendar_errors_total",
		Help: "Google Calendar API attempts that failed, by call and error class.",
	}, []string{"call", "class"})
	m.slackCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "meetingbot_slack_calls_total",
		Help: "Slack Web API attempts, by method and outcome class.",
	}, []string{"call", "class"})
	m.slackErrs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "meetingbot_slack_errors_total",
		Help: "Slack Web API attempts that failed, by method and error class.",
	}, []string{"call", "class"})
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
