package monitor

import (
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/prometheus/client_golang/prometheus"
)

// timerMetrics count durable timers (snoozes): pending, and fired by
// outcome.
type timerMetrics struct {
	pending prometheus.Gauge
	fired   *prometheus.CounterVec
}

// timerLate is how long after its instant a timer's message counts as
// late in meetingbot_timers_fired_total.
const timerLate = 10 * time.Second

func newTimerMetrics(reg prometheus.Registerer) *timerMetrics {
	t := &timerMetrics{
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "meetingbot_timers_pending",
			Help: "Durable timers (snoozes people asked for) waiting for their instant, in the store, as of the timers' last pass.",
		}),
		fired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meetingbot_timers_fired_total",
			Help: "Durable timers ended, by kind and outcome: sent (at its instant), late (sent more than 10s after it: the bot was down or Slack slow), moved (its meeting moved: it waits again for the new start), meeting_cancelled and meeting_ended (nothing sent), failed_permanent.",
		}, []string{"kind", "outcome"}),
	}
	reg.MustRegister(t.pending, t.fired)
	for _, o := range []string{"sent", "late", "moved", "meeting_cancelled", "meeting_ended", "failed_permanent"} {
		t.fired.WithLabelValues(meetingbot.TimerKindSnooze, o)
	}
	return t
}

// TimerFired counts a durable timer ended (meetingbot_timers_fired_total).
func (m *Monitor) TimerFired(t meetingbot.Timer) {
	outcome := string(t.Code)
	switch {
	case t.State == meetingbot.TimerMoved:
		outcome = "moved"
	case t.Code == meetingbot.ReasonSent && t.DoneAt.Sub(t.FireAt) > timerLate:
		outcome = "late"
	case t.Code == meetingbot.ReasonPermanent:
		outcome = "failed_permanent"
	case outcome == "":
		outcome = "other"
	}
	m.timers.fired.WithLabelValues(t.Kind, outcome).Inc()
}

// TimersPending sets meetingbot_timers_pending.
func (m *Monitor) TimersPending(n int) { m.timers.pending.Set(float64(n)) }
