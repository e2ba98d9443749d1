package connect

import (
	"context"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Hooks are told of the changes of people's connections; a nil one is
// skipped. Parts built after the Accounts (self-service's DMs and Home
// tab, the push channels) register theirs with Hook.
type Hooks struct {
	// Connected is told of each connection made (a DM, the Home tab).
	Connected func(ctx context.Context, c meetingbot.Connection)
	// Broken is told, once across replicas, of each connection whose
	// grant the provider refused.
	Broken func(ctx context.Context, c meetingbot.Connection)
	// Disconnecting is called before a connection's grant is revoked,
	// while it still works: stop what was opened with it (push channels).
	Disconnecting func(ctx context.Context, c meetingbot.Connection)
}

// Hook adds h to the hooks told of each connection's changes, after those
// added before it.
func (a *Accounts) Hook(h Hooks) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hooks = append(a.hooks, h)
}

// tell calls the hook which picks of each Hooks with c.
func (a *Accounts) tell(ctx context.Context, c meetingbot.Connection, which func(Hooks) func(context.Context, meetingbot.Connection)) {
	a.mu.Lock()
	hooks := append([]Hooks(nil), a.hooks...)
	a.mu.Unlock()
	for _, h := range hooks {
		if f := which(h); f != nil {
			f(ctx, c)
		}
	}
}

// countEvery is how often Run counts the connections again: another
// replica may have made or lost some.
const countEvery = time.Minute

// Count sets the meetingbot_connections gauge from the store; without a
// Registerer it does nothing.
func (a *Accounts) Count(ctx context.Context) {
	if a.gauge == nil {
		return
	}
	counts, err := a.Counts(ctx)
	if err != nil {
		a.log.Warn("cannot count the connections", "err", err)
		return
	}
	totals := map[meetingbot.ConnectionState]int{meetingbot.ConnectionActive: 0, meetingbot.ConnectionBroken: 0}
	for _, byState := range counts {
		for s, n := range byState {
			totals[s] += n
		}
	}
	for s, n := range totals {
		a.gauge.WithLabelValues(string(s)).Set(float64(n))
	}
}

// Run counts the connections at once and every minute until ctx ends.
func (a *Accounts) Run(ctx context.Context) {
	a.Count(ctx)
	t := time.NewTicker(countEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			a.Count(ctx)
		}
	}
}
