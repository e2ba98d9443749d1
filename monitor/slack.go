package monitor

import "github.com/prometheus/client_golang/prometheus"

// slackMetrics count what Slack's request URLs refused.
type slackMetrics struct {
	refused *prometheus.CounterVec
}

// refusalReasons are the reasons a request to Slack's request URLs is
// refused (selfservice.Refusal), whose series exist from the start.
var refusalReasons = []string{"unsigned", "stale", "signature", "replayed", "too_large", "unchecked", "other_workspace", "other_app"}

func newSlackMetrics(reg prometheus.Registerer) *slackMetrics {
	s := &slackMetrics{
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meetingbot_slack_requests_refused_total",
			Help: "Requests to Slack's request URLs (/slack/commands, /slack/interactivity, /slack/events) and Socket Mode envelopes refused, by reason: unsigned, stale (timestamp over 5 minutes off), signature (does not match), replayed (taken before, by any replica), too_large, unchecked (the store could not tell; 503), other_workspace, other_app (not the bot's team or app).",
		}, []string{"reason"}),
	}
	reg.MustRegister(s.refused)
	for _, r := range refusalReasons {
		s.refused.WithLabelValues(r)
	}
	return s
}

// SlackRefused counts a request to Slack's request URLs refused, by
// reason.
func (m *Monitor) SlackRefused(reason string) { m.slack.refused.WithLabelValues(reason).Inc() }
