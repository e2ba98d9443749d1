// Package status is the engine of people's Slack status during their
// meetings: one subscription per person who connected their Slack user
// (meetingbot.KindStatus, offset 0), reading the calendar of their Slack
// profile email, which the scheduler sweeps with the reminders and hands to
// the status setter (notify.Status) at each meeting's start; and the keeping
// of the statuses shown, which follow their meetings until they end.
package status

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Connections lists the connections people made; both stores provide it.
type Connections interface {
	Connections(ctx context.Context) ([]meetingbot.Connection, error)
}

// Settings reads a person's status settings; both stores provide it.
type Settings interface {
	StatusSettingsOf(ctx context.Context, userID string) (meetingbot.StatusSettings, bool, error)
}

// Keeper makes the statuses shown follow their meetings; *notify.Status
// provides it.
type Keeper interface {
	// Keep makes each status the bot set for subs that may still show at
	// now what the calendar calls for.
	Keep(ctx context.Context, subs []meetingbot.Subscription, now time.Time)
}

// Config configures an Engine.
type Config struct {
	Connections Connections
	// Settings, if set, reads people's settings (titles, out of office);
	// without, everyone has the defaults.
	Settings Settings
	// Email returns a Slack user's profile email (users.info).
	Email func(ctx context.Context, userID string) (string, error)
	// Now is the clock; time.Now when nil.
	Now    func() time.Time
	Logger *slog.Logger
}

// Engine is the status subscriptions of the people who connected their
// Slack user, and the keeping of the statuses shown. It is safe for
// concurrent use.
type Engine struct {
	cfg Config
	now func() time.Time
	log *slog.Logger

	mu     sync.Mutex
	emails map[string]cachedEmail
}

type cachedEmail struct {
	email string
	at    time.Time
}

// emailTTL is how long a person's Slack profile email is reused.
const emailTTL = 10 * time.Minute

// keepInterval is how often the statuses shown are checked against their
// meetings.
const keepInterval = 5 * time.Second

// New returns the Engine of cfg.
func New(cfg Config) *Engine {
	e := &Engine{cfg: cfg, now: cfg.Now, log: cfg.Logger, emails: map[string]cachedEmail{}}
	if e.now == nil {
		e.now = time.Now
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	return e
}

// Settings returns userID's status settings; the defaults when none are
// stored or they cannot be read.
func (e *Engine) Settings(ctx context.Context, userID string) meetingbot.StatusSettings {
	if e.cfg.Settings == nil {
		return meetingbot.StatusSettings{UserID: userID}
	}
	set, _, err := e.cfg.Settings.StatusSettingsOf(ctx, userID)
	if err != nil {
		return meetingbot.StatusSettings{UserID: userID}
	}
	return set
}

// Subscriptions returns one status subscription per active Slack
// connection whose person's email is known; it asks for the calendar's
// out-of-office events when its person turned them on.
func (e *Engine) Subscriptions(ctx context.Context) ([]meetingbot.Subscription, error) {
	cs, err := e.cfg.Connections.Connections(ctx)
	if err != nil {
		return nil, err
	}
	var out []meetingbot.Subscription
	for _, c := range cs {
		if c.Provider != meetingbot.ProviderSlack || c.State != meetingbot.ConnectionActive {
			continue
		}
		email := e.email(ctx, c.UserID)
		if email == "" {
			continue
		}
		out = append(out, meetingbot.Subscription{
			ID: meetingbot.StatusSubscription(c.UserID), Kind: meetingbot.KindStatus, CalendarID: email, Reader: c.UserID,
			Destination: meetingbot.StatusDestination(c.UserID),
			Offsets:     []time.Duration{0}, OutOfOffice: e.Settings(ctx, c.UserID).OutOfOffice,
		})
	}
	return out, nil
}

// Calendars lists the calendars of the status subscriptions, for the
// mirror.
func (e *Engine) Calendars(ctx context.Context) ([]string, error) {
	subs, err := e.Subscriptions(ctx)
	out := make([]string, len(subs))
	for i, sub := range subs {
		out[i] = sub.Reading()
	}
	return out, err
}

// email returns userID's Slack profile email, reused for emailTTL; "" when
// it cannot be read.
func (e *Engine) email(ctx context.Context, userID string) string {
	e.mu.Lock()
	c, ok := e.emails[userID]
	e.mu.Unlock()
	if ok && e.now().Sub(c.at) < emailTTL {
		return c.email
	}
	email, err := e.cfg.Email(ctx, userID)
	if err != nil {
		e.log.Warn("cannot read the email of a person whose status the bot sets", "user", userID, "err", err)
		return c.email
	}
	email = strings.ToLower(email)
	e.mu.Lock()
	e.emails[userID] = cachedEmail{email: email, at: e.now()}
	e.mu.Unlock()
	return email
}

// Keep checks the statuses shown against their meetings every
// keepInterval until ctx ends, with k.
func (e *Engine) Keep(ctx context.Context, k Keeper) {
	t := time.NewTicker(keepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			e.KeepOnce(ctx, k)
		}
	}
}

// KeepOnce checks the statuses shown against their meetings now, with k.
func (e *Engine) KeepOnce(ctx context.Context, k Keeper) {
	subs, err := e.Subscriptions(ctx)
	if err != nil {
		return
	}
	k.Keep(ctx, subs, e.now())
}
