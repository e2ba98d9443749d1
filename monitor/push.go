package monitor

import "github.com/prometheus/client_golang/prometheus"

// pushMetrics count the mirror's syncs of calendars, the push
// notifications received, and the channels open.
type pushMetrics struct {
	syncs         *prometheus.CounterVec
	notifications *prometheus.CounterVec
	channels      prometheus.Gauge
}

func newPushMetrics(reg prometheus.Registerer) *pushMetrics {
	p := &pushMetrics{
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meetingbot_calendar_syncs_total",
			Help: "Syncs of a calendar's mirror, by kind: full, incremental (with the sync token), gone (Google refused the token with 410; a full sync follows).",
		}, []string{"kind"}),
		notifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meetingbot_push_notifications_total",
			Help: "Requests on POST /google/notify, by outcome: accepted, replayed (a message number of its channel seen already: nothing done), or refused and why (channel: unknown; token; resource; state; message_number).",
		}, []string{"outcome"}),
		channels: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "meetingbot_push_channels_open",
			Help: "Calendar push channels open (events.watch), as last counted.",
		}),
	}
	reg.MustRegister(p.syncs, p.notifications, p.channels)
	for _, k := range []string{"full", "incremental", "gone"} {
		p.syncs.WithLabelValues(k)
	}
	for _, o := range []string{"accepted", "replayed", "channel", "token"} {
		p.notifications.WithLabelValues(o)
	}
	return p
}

// Synced counts a sync of a calendar's mirror: kind is full, incremental
// or gone.
func (m *Monitor) Synced(kind string) { m.push.syncs.WithLabelValues(kind).Inc() }

// Notified counts a request on the notification endpoint: accepted, or
// why it was refused.
func (m *Monitor) Notified(outcome string) { m.push.notifications.WithLabelValues(outcome).Inc() }

// ChannelsOpen sets the number of push channels open.
func (m *Monitor) ChannelsOpen(n int) { m.push.channels.Set(float64(n)) }
