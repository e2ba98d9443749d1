package calendar

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Google's default Calendar API quotas, in requests a minute.
const (
	DefaultProjectQuota = 10000
	DefaultUserQuota    = 600
)

// quota keeps this process's Calendar requests within Google's per-minute
// quotas, so that a sweep of thousands of calendars slows down instead of
// drawing 403 rateLimitExceeded and 429 answers. Every request waits for
// one place in the project's budget and one in the budget of the user it
// counts against.
//
// Google enforces two quotas (https://developers.google.com/workspace/calendar/api/guides/quota):
// requests a minute per project (10,000 by default) and per user per
// project (600), over a sliding minute. The user a request counts against
// is its authenticated principal: the quotaUser parameter could name
// another, but it is ignored unless an API key identifies the quota
// project (https://cloud.google.com/apis/docs/system-parameters), and the
// bot authenticates with OAuth tokens, so it sends none. The principal is
// the service account itself when it reads calendars shared with it, so
// all of them share one user budget; the impersonated user with
// domain-wide delegation, whose access token the service account obtains
// with that user as the JWT's subject
// (https://developers.google.com/identity/protocols/oauth2/service-account#delegatingauthority),
// so each calendar has its own; and the account of authorized-user
// credentials. The quota page's advice for a service account that reaches
// the per-user limit, to spread the load over users or service accounts,
// says the same.
type quota struct {
	now   func() time.Time
	sleep func(context.Context, time.Duration) error

	project *rate.Limiter
	perUser int
	mu      sync.Mutex
	users   map[string]*rate.Limiter
}

func newQuota(projectPerMinute, userPerMinute int, now func() time.Time, sleep func(context.Context, time.Duration) error) *quota {
	if projectPerMinute <= 0 {
		projectPerMinute = DefaultProjectQuota
	}
	if userPerMinute <= 0 {
		userPerMinute = DefaultUserQuota
	}
	return &quota{
		now:     now,
		sleep:   sleep,
		project: perMinute(projectPerMinute),
		perUser: userPerMinute,
		users:   map[string]*rate.Limiter{},
	}
}

// perMinute returns a token bucket that lets through at most n requests in
// any minute: a burst of b (a second's worth, at least 1), then a steady
// (n-b+1) a minute. A minute that begins with a full bucket holds the b
// requests of the burst and n-b more, one every 60/(n-b+1) seconds.
func perMinute(n int) *rate.Limiter {
	b := max(1, n/60)
	return rate.NewLimiter(rate.Limit(float64(n-b+1)/60), b)
}

// user returns the limiter of principal's budget, creating it.
func (q *quota) user(principal string) *rate.Limiter {
	q.mu.Lock()
	defer q.mu.Unlock()
	l := q.users[principal]
	if l == nil {
		l = perMinute(q.perUser)
		q.users[principal] = l
	}
	return l
}

// wait takes one place in principal's budget, then one in the project's,
// sleeping until each is free, and returns how long it slept. It fails
// only when ctx ends first. The project's place is taken once the user's
// is free, so the project budget sees requests when they are sent.
func (q *quota) wait(ctx context.Context, principal string) (time.Duration, error) {
	var waited time.Duration
	for _, l := range []*rate.Limiter{q.user(principal), q.project} {
		now := q.now()
		r := l.ReserveN(now, 1) // always OK: every bucket holds at least 1
		d := r.DelayFrom(now)
		if d <= 0 {
			continue
		}
		if err := q.sleep(ctx, d); err != nil {
			r.CancelAt(q.now())
			return waited, err
		}
		waited += d
	}
	return waited, nil
}

// quotaPrincipal names whose per-user quota a request for calendarID
// counts against: see quota.
func (s *Source) quotaPrincipal(calendarID string) string {
	switch {
	case s.cfg.Impersonate:
		return calendarID
	case s.creds.clientEmail != "":
		return s.creds.clientEmail
	}
	return "authorized user"
}
