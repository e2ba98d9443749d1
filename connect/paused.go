package connect

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Subscriptions made in Slack, and the status ones, whose calendar nothing
// can read are paused rather than swept: a sweep of them would fail every
// tick, and /healthz would say the bot is unhealthy because one person
// disconnected (or lost their connection). Their person was told (the
// disconnect's reply, the DM of a stopped connection, the Home tab) and
// bot audit names them.

// Rechecks of the service account's access to a calendar whose
// connection stopped.
const (
	// accessRecheck is how long an answer is kept: a person who shares
	// their calendar with the service account after their connection
	// stopped is read again within it.
	accessRecheck = 10 * time.Minute
	// accessRetry is how long an answer that may pass (a 5xx, the
	// network) is kept.
	accessRetry = time.Minute
	// accessTimeout bounds one check, made during a sweep.
	accessTimeout = 5 * time.Second
)

// Lister lists the connections people made.
type Lister interface {
	Connections(ctx context.Context) ([]meetingbot.Connection, error)
}

// Access reads calendarID as a sweep would with the bot's own credentials
// (calendar.Source.Access): the role they have, or the fix and an error.
type Access func(ctx context.Context, calendarID string) (role, fix string, err error)

// Pauses says which subscriptions the scheduler sweeps with people's own
// accounts on. A subscription its person set up of their own calendar
// (meetingbot.Subscription.Reader) is read with their connected Google
// account while it is active; any other, with the bot's own credentials, if it
// has some and, for a calendar whose connection stopped, only where they
// can read it (checked once per calendar per accessRecheck). Without
// either its subscriptions are paused until its person connects (again).
type Pauses struct {
	conns Lister
	// access is nil when the bot has no credentials of its own.
	access Access
	now    func() time.Time

	mu      sync.Mutex
	checked map[string]accessCheck // by calendar ID, lower case
}

type accessCheck struct {
	ok    bool
	until time.Time
}

// NewPauses returns the Pauses of the connections conns lists; access is
// nil when the bot has no credentials of its own, now the clock (time.Now
// when nil).
func NewPauses(conns Lister, access Access, now func() time.Time) *Pauses {
	if now == nil {
		now = time.Now
	}
	return &Pauses{conns: conns, access: access, now: now, checked: map[string]accessCheck{}}
}

// Swept returns those of subs the scheduler sweeps: subs less those
// paused.
func (p *Pauses) Swept(ctx context.Context, subs []meetingbot.Subscription) ([]meetingbot.Subscription, error) {
	conns, err := p.conns.Connections(ctx)
	if err != nil {
		return nil, err
	}
	google := map[string]meetingbot.Connection{}
	for _, conn := range conns {
		if conn.Provider == meetingbot.ProviderGoogle {
			google[strings.ToLower(conn.Account)] = conn
		}
	}
	out := make([]meetingbot.Subscription, 0, len(subs))
	for _, sub := range subs {
		conn, connected := google[strings.ToLower(sub.CalendarID)]
		switch {
		case connected && conn.State == meetingbot.ConnectionActive && conn.UserID == sub.Reader:
			// read with its person's own account
		case p.access == nil:
			continue // paused: nothing reads it until its person connects
		case connected && !p.readable(ctx, sub.CalendarID):
			continue // paused: nothing reads it until its person (re)connects or shares it
		}
		out = append(out, sub)
	}
	return out, nil
}

// readable reports whether the bot's own credentials could read
// calendarID when last checked, checking it now if that was more than
// accessRecheck ago. An answer that may pass keeps what was known before
// (nothing: not readable) for accessRetry.
func (p *Pauses) readable(ctx context.Context, calendarID string) bool {
	id := strings.ToLower(calendarID)
	now := p.now()
	p.mu.Lock()
	c, ok := p.checked[id]
	p.mu.Unlock()
	if ok && now.Before(c.until) {
		return c.ok
	}
	check, cancel := context.WithTimeout(ctx, accessTimeout)
	defer cancel()
	role, _, err := p.access(check, calendarID)
	switch {
	case err == nil:
		c = accessCheck{ok: role != "", until: now.Add(accessRecheck)}
	case meetingbot.IsPermanent(err):
		c = accessCheck{ok: false, until: now.Add(accessRecheck)}
	default:
		c.until = now.Add(accessRetry)
	}
	p.mu.Lock()
	p.checked[id] = c
	p.mu.Unlock()
	return c.ok
}
