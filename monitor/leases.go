package monitor

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// leases is what a replica among several holds: the subscriptions it
// leases, of how many, and whether the database answered the last
// renewal. Guarded by Monitor.mu.
type leases struct {
	held  prometheus.Gauge
	total prometheus.Gauge

	on           bool            // Leases was called: the work is shared
	ids          map[string]bool // the subscriptions held
	of           int             // of how many
	renewed      time.Time       // last renewal that answered
	failingSince time.Time       // first failed renewal since; zero when fine
	lastErr      string
}

func newLeases(reg prometheus.Registerer, subs int) *leases {
	l := &leases{
		held: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "meetingbot_subscriptions_held",
			Help: "Subscriptions this replica sweeps: with several replicas on PostgreSQL, those it holds a lease on; with one, all.",
		}),
		total: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "meetingbot_subscriptions_shared",
			Help: "Subscriptions the replicas share, this one's included: the sum of meetingbot_subscriptions_held over the replicas.",
		}),
	}
	reg.MustRegister(l.held, l.total)
	l.held.Set(float64(subs))
	l.total.Set(float64(subs))
	return l
}

// Leases records a renewal of this replica's share of the subscriptions
// (several replicas on PostgreSQL): the IDs of those it holds, of total,
// or the error that kept the database from answering. From the first
// call on, /healthz judges only the subscriptions held: a subscription
// taken over counts as healthy from the moment it is taken, for StaleAfter
// intervals; and a database that has not answered for StaleAfter
// intervals (the leases have run out by then) fails it.
func (m *Monitor) Leases(held []string, total int, err error) {
	at := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.leases
	if !l.on {
		l.on, l.renewed = true, at // the replica started now
	}
	if err != nil {
		if l.failingSince.IsZero() {
			l.failingSince = at
		}
		l.lastErr = err.Error()
		return
	}
	ids := make(map[string]bool, len(held))
	for _, id := range held {
		ids[id] = true
		if !l.ids[id] {
			m.subs[id] = &subHealth{lastGood: at} // taken now: its sweeps start now
		}
	}
	l.ids, l.of, l.renewed, l.failingSince, l.lastErr = ids, total, at, time.Time{}, ""
	l.held.Set(float64(len(ids)))
	l.total.Set(float64(total))
}

// skips reports whether sub is another replica's; m.mu is held.
func (l *leases) skips(sub string) bool { return l.on && !l.ids[sub] }

// unhealthy returns a line for a database that has not answered a renewal
// for more than limit, "" otherwise; m.mu is held.
func (l *leases) unhealthy(now time.Time, limit time.Duration) string {
	if !l.on || l.failingSince.IsZero() || now.Sub(l.renewed) <= limit {
		return ""
	}
	return fmt.Sprintf("database: unreachable since %s (last lease renewal %s ago, more than %d ticks: this replica's leases have run out and nothing is sent); last error: %s",
		l.failingSince.UTC().Format(time.RFC3339), now.Sub(l.renewed).Round(time.Second), StaleAfter, l.lastErr)
}

// summary is the health page's line about the leases, "" with one
// replica; m.mu is held.
func (l *leases) summary(now time.Time) string {
	if !l.on {
		return ""
	}
	db := fmt.Sprintf("database reachable (leases renewed %s ago)", now.Sub(l.renewed).Round(time.Second))
	if !l.failingSince.IsZero() {
		db = fmt.Sprintf("database unreachable since %s: %s", l.failingSince.UTC().Format(time.RFC3339), l.lastErr)
	}
	return fmt.Sprintf("leases: this replica holds %d of %d subscriptions; %s\n", len(l.ids), l.of, db)
}
