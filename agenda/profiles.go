package agenda

import (
	"context"
	"sync"
	"time"
)

// profileTTL is how long a Slack profile read for the agenda is reused:
// a zone changed in Slack is seen within it, well before the next day's
// agenda.
const profileTTL = 10 * time.Minute

// Profiles are the People of the agendas as their Slack profiles
// (users.info) say, each kept profileTTL, so that a pass every tick does
// not call Slack for everyone every time.
type Profiles struct {
	read func(ctx context.Context, userID string) (email, tz string, err error)
	now  func() time.Time

	mu    sync.Mutex
	cache map[string]cachedProfile
}

type cachedProfile struct {
	p  Person
	at time.Time
}

// NewProfiles returns the Profiles read with read (notify.Slack.Profile),
// on the clock now (time.Now when nil).
func NewProfiles(read func(ctx context.Context, userID string) (email, tz string, err error), now func() time.Time) *Profiles {
	if now == nil {
		now = time.Now
	}
	return &Profiles{read: read, now: now}
}

// Person returns the user's profile email and zone.
func (p *Profiles) Person(ctx context.Context, userID string) (Person, error) {
	now := p.now()
	p.mu.Lock()
	c, ok := p.cache[userID]
	p.mu.Unlock()
	if ok && now.Sub(c.at) < profileTTL {
		return c.p, nil
	}
	email, tz, err := p.read(ctx, userID)
	if err != nil {
		return Person{}, err
	}
	person := Person{Email: email, TZ: tz}
	p.mu.Lock()
	if p.cache == nil {
		p.cache = map[string]cachedProfile{}
	}
	p.cache[userID] = cachedProfile{p: person, at: now}
	p.mu.Unlock()
	return person, nil
}
