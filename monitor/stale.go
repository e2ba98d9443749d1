package monitor

import (
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meetingbot/meetingbot"
)

// staleMetrics count the sweeps that reminded from a calendar's older
// reading because the calendar could not be read afresh, and the
// subscriptions doing so now, by why.
type staleMetrics struct {
	sweeps *prometheus.CounterVec
	now    *prometheus.GaugeVec

	mu  sync.Mutex
	why map[string]meetingbot.StaleReason // by subscription, those whose last sweep was stale
}

func newStaleMetrics(reg prometheus.Registerer) *staleMetrics {
	s := &staleMetrics{
		sweeps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meetingbot_sweeps_from_last_reading_total",
			Help: "Sweeps that planned and sent from the mirror's last reading of their calendar, which could not be read afresh, by why: unavailable (an outage, a network error) or quota (the Calendar quota had no place for the read in time).",
		}, []string{"why"}),
		now: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "meetingbot_subscriptions_on_last_reading",
			Help: "Subscriptions whose last sweep worked from an older reading of their calendar, by why (unavailable, quota); their reminders go out as that reading planned them until a newer one comes.",
		}, []string{"why"}),
		why: map[string]meetingbot.StaleReason{},
	}
	reg.MustRegister(s.sweeps, s.now)
	for _, w := range []meetingbot.StaleReason{meetingbot.StaleUnavailable, meetingbot.StaleQuota} {
		s.sweeps.WithLabelValues(string(w))
		s.now.WithLabelValues(string(w))
	}
	return s
}

// swept notes whether sub's sweep, which ended with err, was stale.
func (s *staleMetrics) swept(sub string, err error) {
	var stale *meetingbot.StaleReading
	isStale := errors.As(err, &stale)
	s.mu.Lock()
	defer s.mu.Unlock()
	if was, ok := s.why[sub]; ok {
		s.now.WithLabelValues(string(was)).Dec()
		delete(s.why, sub)
	}
	if isStale {
		s.sweeps.WithLabelValues(string(stale.Why)).Inc()
		s.now.WithLabelValues(string(stale.Why)).Inc()
		s.why[sub] = stale.Why
	}
}
