package monitor

import (
	"fmt"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meetingbot/meetingbot"
)

// destinations keeps the last verdict on each subscription's Slack
// destination: the permanent failures an operator must fix.
type destinations struct {
	gauge *prometheus.GaugeVec

	mu  sync.Mutex
	bad map[string]string // subscription ID -> the failure and its fix
}

func newDestinations(reg prometheus.Registerer, subs []meetingbot.Subscription) *destinations {
	d := &destinations{
		gauge: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "meetingbot_destination_unusable",
			Help: "1 while a subscription's Slack destination is refused for good (no such channel or user, bot not invited, archived, deactivated), else 0.",
		}, []string{"subscription"}),
		bad: map[string]string{},
	}
	reg.MustRegister(d.gauge)
	for _, s := range subs {
		d.gauge.WithLabelValues(s.ID).Set(0)
	}
	return d
}

// Destination records the latest check of sub's Slack destination
// (notify.Slack.Resolve): nil means reminders can reach it; an error
// marked meetingbot.Permanent lists the subscription on /healthz, and sets
// meetingbot_destination_unusable, until a check succeeds. Other errors
// (Slack unreachable for now) leave the record as it was.
func (m *Monitor) Destination(sub meetingbot.Subscription, err error) {
	d := m.dest
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case err == nil:
		delete(d.bad, sub.ID)
		d.gauge.WithLabelValues(sub.ID).Set(0)
	case meetingbot.IsPermanent(err):
		d.bad[sub.ID] = err.Error()
		d.gauge.WithLabelValues(sub.ID).Set(1)
	}
}

// Unreachable returns one line per subscription whose Slack destination
// was last refused for good, with the failure and its fix; none when all
// can be reached.
func (m *Monitor) Unreachable() []string {
	d := m.dest
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.bad))
	for id, msg := range d.bad {
		out = append(out, fmt.Sprintf("subscription %s: %s", id, msg))
	}
	slices.Sort(out)
	return out
}
