package main

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

// sweptSubscriptions returns the subscriptions the scheduler sweeps with
// people's own accounts on: those made in Slack (made, nil for none) and
// the status ones (stat, nil for none), less those paused. A calendar is
// read with its person's connected Google account while it is active;
// else with the service account, if the bot has one (serviceAccount) and,
// for a calendar whose connection stopped, only where sa says the service
// account can read it. Without either it is paused until its person
// connects (again). It tells mon every subscription swept, fixed
// (CALENDARS) included.
func sweptSubscriptions(made func(ctx context.Context) ([]meetingbot.Subscription, error), stat *statuses, c *connections, serviceAccount bool,
	sa *serviceReads, fixed []meetingbot.Subscription, mon interface {
		Sweeping([]meetingbot.Subscription)
	}) func(ctx context.Context) ([]meetingbot.Subscription, error) {
	return func(ctx context.Context) ([]meetingbot.Subscription, error) {
		var subs []meetingbot.Subscription
		if made != nil {
			got, err := made(ctx)
			if err != nil {
				return nil, err
			}
			subs = got
		}
		if stat != nil {
			got, err := stat.subscriptions(ctx)
			if err != nil {
				return nil, err
			}
			subs = append(subs, got...)
		}
		conns, err := c.store.Connections(ctx)
		if err != nil {
			return nil, err
		}
		google := map[string]meetingbot.ConnectionState{}
		for _, conn := range conns {
			if conn.Provider == meetingbot.ProviderGoogle {
				google[strings.ToLower(conn.Account)] = conn.State
			}
		}
		out := subs[:0]
		for _, sub := range subs {
			state, connected := google[strings.ToLower(sub.CalendarID)]
			switch {
			case connected && state == meetingbot.ConnectionActive:
			case !serviceAccount:
				continue // paused: nothing reads it until its person connects
			case connected && (sa == nil || !sa.readable(ctx, sub.CalendarID)):
				continue // paused until its person reconnects
			}
			out = append(out, sub)
		}
		mon.Sweeping(append(append([]meetingbot.Subscription{}, fixed...), out...))
		return out, nil
	}
}

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

// serviceReads says whether the service account can read the calendars
// whose connection stopped, one Calendar call per calendar per
// accessRecheck.
type serviceReads struct {
	// access reads calendarID as a sweep would (calendar.Source.Access):
	// with the service account once its connection stopped.
	access func(ctx context.Context, calendarID string) (role, fix string, err error)
	now    func() time.Time

	mu      sync.Mutex
	checked map[string]accessCheck // by calendar ID, lower case
}

type accessCheck struct {
	ok    bool
	until time.Time
}

// readable reports whether the service account could read calendarID when
// last checked, checking it now if that was more than accessRecheck ago.
// An answer that may pass keeps what was known before (nothing: not
// readable) for accessRetry.
func (r *serviceReads) readable(ctx context.Context, calendarID string) bool {
	id := strings.ToLower(calendarID)
	now := r.now()
	r.mu.Lock()
	c, ok := r.checked[id]
	r.mu.Unlock()
	if ok && now.Before(c.until) {
		return c.ok
	}
	check, cancel := context.WithTimeout(ctx, accessTimeout)
	defer cancel()
	role, _, err := r.access(check, calendarID)
	switch {
	case err == nil:
		c = accessCheck{ok: role != "", until: now.Add(accessRecheck)}
	case meetingbot.IsPermanent(err):
		c = accessCheck{ok: false, until: now.Add(accessRecheck)}
	default:
		c.until = now.Add(accessRetry)
	}
	r.mu.Lock()
	r.checked[id] = c
	r.mu.Unlock()
	return c.ok
}
