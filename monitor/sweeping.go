package monitor

import "github.com/meetingbot/meetingbot"

// Sweeping tells the monitor which subscriptions the scheduler sweeps now:
// those of CALENDARS and those people made from Slack, which come and go.
// One no longer among them (turned off in Slack) is forgotten: it no
// longer counts on /healthz and its last-success series leaves /metrics,
// so a subscription turned off never makes the bot unhealthy three ticks
// later. One new to the monitor counts as healthy from now for StaleAfter
// intervals, as at start-up.
func (m *Monitor) Sweeping(subs []meetingbot.Subscription) {
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	current := make(map[string]bool, len(subs))
	for _, s := range subs {
		current[s.ID] = true
		if m.subs[s.ID] == nil {
			m.subs[s.ID] = &subHealth{lastGood: now}
		}
	}
	for id := range m.subs {
		if !current[id] {
			delete(m.subs, id)
			m.metrics.lastSuccess.DeleteLabelValues(id)
		}
	}
}
