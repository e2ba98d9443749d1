package calendar

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/meetingbot/meetingbot"
)

// Google's default Calendar API quotas, in requests a minute; a project
// may have others (Config.ProjectQuota, Config.UserQuota).
const (
	DefaultProjectQuota = 10000
	DefaultUserQuota    = 600
)

// quota keeps this process's Calendar requests within Google's per-minute
// quotas, so that a sweep of thousands of calendars slows down instead of
// drawing 403 rateLimitExceeded and 429 answers. Every request waits for
// one place in the budget of the user it counts against, then one in the
// project's.
//
// Google enforces two quotas, "per minute per project" and "per minute
// per project per user", calculated over a sliding minute; exceeding
// either is answered 403 or 429 with the domain usageLimits ("Manage
// quotas", https://developers.google.com/workspace/calendar/api/guides/quota).
// The values are the project's: 10,000 and 600 by default, other values
// for projects that started using the API after 2026-05-01, more for
// projects that asked for more; CALENDAR_QUOTA_PER_MINUTE and
// CALENDAR_QUOTA_PER_USER_PER_MINUTE say which (config/quota.go).
//
// The user a request counts against is its authenticated principal: the
// quotaUser parameter could name another, but it is ignored unless an API
// key identifies the quota project
// (https://cloud.google.com/apis/docs/system-parameters), and the bot
// authenticates with OAuth tokens, so it sends none. The principal is the
// service account itself when it reads calendars shared with it, so all
// of them share one user budget; the impersonated user with domain-wide
// delegation, whose access token the service account obtains with that
// user as the JWT's subject
// (https://developers.google.com/identity/protocols/oauth2/service-account#delegatingauthority),
// so each calendar has its own; and the account of authorized-user
// credentials. The quota page's advice for a service account that reaches
// the per-user limit, to spread the load over users or service accounts,
// says the same.
//
// When the calls wanted exceed a budget, the budget serves them in order
// of urgency (meetingbot.Urgency: the instant each is needed by, its
// context's deadline by default), not of arrival: the check just before a
// reminder goes out comes before a routine resync of a calendar whose
// next reminder is an hour away. A call that could not get its place
// before its context's deadline, or within the bound of
// meetingbot.WithQuotaWait, fails at once with meetingbot.ErrQuotaWait
// and spends nothing, so that its caller answers from what it read before
// rather than wait.
//
// A usage-limit answer all the same (usageLimitOf: 403 or 429 of the
// domain usageLimits, "Handle API errors",
// https://developers.google.com/workspace/calendar/api/guides/errors)
// says the budget is more than Google gives now (a quota lowered, other
// clients of the project, the sliding window), and whose budget: the
// user's for userRateLimitExceeded, quotaExceeded and an answer naming a
// per-user quota; the project's for dailyLimitExceeded and one naming the
// project's per-minute or daily quota. A per-minute limit halves that
// budget, at most once every lowerEvery; a plain "Rate Limit Exceeded",
// which names none, halves the user's, and the project's too when several
// users were answered so within a minute. The project's daily limit and
// Calendar's own usage limits last hours: they drop their budget to one
// call a minute, which probes until the limit is lifted. A budget lowered
// grows back by a quarter of its configured value each minute without
// such an answer. Google asks for exponential backoff of the request
// itself, which withRetries does for a per-minute limit.
type quota struct {
	now   func() time.Time
	sleep func(context.Context, time.Duration) error

	project *budget
	perUser int

	mu    sync.Mutex
	users map[string]*budget
	plain map[string]time.Time // principals answered a plain rate limit, when
	// changed, if set, is told of each budget lowered or grown back.
	changed func(QuotaChange)
}

// Timings of a budget lowered by rate-limit answers.
const (
	// lowerEvery spaces the halvings of a budget: the answers of requests
	// sent together before the first count once.
	lowerEvery = 10 * time.Second
	// recoverEvery is how long a lowered budget goes without a rate-limit
	// answer before it grows back by a quarter.
	recoverEvery = time.Minute
)

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
		project: newBudget(projectPerMinute),
		perUser: userPerMinute,
		users:   map[string]*budget{},
		plain:   map[string]time.Time{},
	}
}

// user returns the budget of principal, creating it.
func (q *quota) user(principal string) *budget {
	q.mu.Lock()
	defer q.mu.Unlock()
	b := q.users[principal]
	if b == nil {
		b = newBudget(q.perUser)
		q.users[principal] = b
	}
	return b
}

// wait takes one place in principal's budget, then one in the project's,
// sleeping until each is free, and returns how long it slept. It fails
// when ctx ends first, or at once, with meetingbot.ErrQuotaWait, when a
// place could not be had by ctx's deadline; a place taken in the user's
// budget is then given back. The project's place is taken once the
// user's is free, so the project budget sees requests when they are sent.
func (q *quota) wait(ctx context.Context, principal string) (time.Duration, error) {
	urgency, _ := meetingbot.Urgency(ctx)
	user := q.user(principal)
	place, waited, err := user.take(ctx, q, urgency)
	if err != nil {
		return waited, err
	}
	_, more, err := q.project.take(ctx, q, urgency)
	if err != nil {
		user.giveBack(place, q.now())
	}
	return waited + more, err
}

// limited lowers the budgets after Google answered a request of
// principal with the usage limit l (see quota).
func (q *quota) limited(principal string, l usageLimit) {
	now := q.now()
	scopes := []string{l.scope}
	if l.scope == "" {
		// A plain rate limit: the user's, and the project's when other
		// users met one within a minute.
		scopes = []string{"user"}
		q.mu.Lock()
		q.plain[principal] = now
		others := 0
		for p, at := range q.plain {
			switch {
			case now.Sub(at) > time.Minute:
				delete(q.plain, p)
			case p != principal:
				others++
			}
		}
		q.mu.Unlock()
		if others > 0 {
			scopes = append(scopes, "project")
		}
	}
	q.mu.Lock()
	changed := q.changed
	q.mu.Unlock()
	for _, scope := range scopes {
		b, who := q.project, ""
		if scope == "user" {
			b, who = q.user(principal), principal
		}
		if n, conf, ok := b.lower(now, l.lasting()); ok && changed != nil {
			changed(QuotaChange{Scope: scope, Principal: who, PerMinute: n, Configured: conf, Limit: l.limit, Reason: l.reason})
		}
	}
}

// grown tells of a budget grown back.
func (q *quota) grown(b *budget, n int) {
	q.mu.Lock()
	changed := q.changed
	scope, principal := "project", ""
	if b != q.project {
		scope = "user"
		for p, u := range q.users {
			if u == b {
				principal = p
			}
		}
	}
	q.mu.Unlock()
	if changed != nil {
		changed(QuotaChange{Scope: scope, Principal: principal, PerMinute: n, Configured: b.configured})
	}
}

// budget is one per-minute quota: a token bucket (perMinute) whose
// requests wait in order of urgency.
type budget struct {
	mu         sync.Mutex
	full       int // the pace configured for the whole project
	configured int // full, or this replica's share of it (share)
	perMinute  int // now: configured, or less after rate-limit answers
	lim        *rate.Limiter
	loweredAt  time.Time // when perMinute was last halved
	limitedAt  time.Time // the last rate-limit answer, or growth back
	queue      []*waiter // by urgency, then arrival
	seq        uint64
}

// waiter is a request waiting for its place.
type waiter struct {
	urgency time.Time // zero: the least urgent
	seq     uint64
	wake    chan struct{} // it may have become the first
}

// before reports whether w is served before o.
func (w *waiter) before(o *waiter) bool {
	switch {
	case w.urgency.IsZero() != o.urgency.IsZero():
		return !w.urgency.IsZero()
	case !w.urgency.Equal(o.urgency):
		return w.urgency.Before(o.urgency)
	}
	return w.seq < o.seq
}

func newBudget(perMinute int) *budget {
	b, r := bucket(perMinute)
	return &budget{full: perMinute, configured: perMinute, perMinute: perMinute, lim: rate.NewLimiter(r, b)}
}

// share makes b's pace f of its full pace (at least one call a minute):
// lowered at once, and a pace lowered by rate-limit answers grows back to
// it; it reports whether the pace configured changed.
func (b *budget) share(now time.Time, f float64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := max(1, int(math.Round(float64(b.full)*f)))
	if n == b.configured {
		return false
	}
	unlowered := b.perMinute == b.configured
	b.configured = n
	if unlowered || b.perMinute > n {
		b.set(now, n)
	}
	return true
}

// bucket is a token bucket that lets through at most n requests in any
// minute, less a hundredth of them: a burst of b (a second's worth, at
// least 1), then a steady (n-n/100-b+1) a minute. A minute that begins
// with a full bucket holds the b requests of the burst and n-n/100-b
// more, one every 60/(n-n/100-b+1) seconds. The hundredth kept back is
// for the time requests take to reach Google, which counts them as they
// arrive, over a sliding minute: a bucket that let n through in any
// minute as sent had a request a run refused now and then at 600 a minute,
// and each such answer halves the budget for a while (see quota).
func bucket(n int) (burst int, r rate.Limit) {
	n -= n / 100
	b := max(1, n/60)
	return b, rate.Limit(float64(n-b+1) / 60)
}

// take waits for a place in b, in order of urgency (see quota), and
// returns it and how long it waited.
func (b *budget) take(ctx context.Context, q *quota, urgency time.Time) (*rate.Reservation, time.Duration, error) {
	start := q.now()
	b.mu.Lock()
	if n, grew := b.recover(start); grew {
		defer q.grown(b, n)
	}
	if len(b.queue) == 0 {
		if place := b.free(start); place != nil {
			b.mu.Unlock()
			return place, 0, nil
		}
	}
	w := &waiter{urgency: urgency, seq: b.seq, wake: make(chan struct{}, 1)}
	b.seq++
	ahead := 0
	for _, o := range b.queue {
		if o.before(w) {
			ahead++
		}
	}
	// The bound is of the real clock, as every context's deadline is; the
	// budget's clock (Config.Now) may be a test's.
	if most, ok := meetingbot.QuotaWait(ctx); ok && b.delay(start, ahead+1) > most {
		perMinute := b.perMinute
		b.mu.Unlock()
		return nil, 0, fmt.Errorf("%w (%d calls ahead of it, %d a minute)", meetingbot.ErrQuotaWait, ahead, perMinute)
	}
	i, _ := slices.BinarySearchFunc(b.queue, w, func(o, w *waiter) int {
		if o.before(w) {
			return -1
		}
		return 1
	})
	b.queue = slices.Insert(b.queue, i, w)
	b.mu.Unlock()
	for {
		b.mu.Lock()
		now := q.now()
		if b.queue[0] != w {
			b.mu.Unlock()
			select {
			case <-w.wake:
				continue
			case <-ctx.Done():
				b.leave(w)
				return nil, now.Sub(start), ctx.Err()
			}
		}
		if place := b.free(now); place != nil {
			b.queue = b.queue[1:]
			b.wakeFirst()
			b.mu.Unlock()
			return place, now.Sub(start), nil
		}
		d := b.delay(now, 1)
		b.mu.Unlock()
		if err := q.sleep(ctx, d); err != nil {
			b.leave(w)
			return nil, q.now().Sub(start), err
		}
	}
}

// free takes a place if one is free at now; b.mu is held.
func (b *budget) free(now time.Time) *rate.Reservation {
	if b.lim.TokensAt(now) < 1 {
		return nil
	}
	return b.lim.ReserveN(now, 1)
}

// delay returns how long from now until n places are free, when nobody
// else takes one meanwhile; at least a millisecond when one is not free
// now, so that a wait always moves the clock.
func (b *budget) delay(now time.Time, n int) time.Duration {
	missing := float64(n) - b.lim.TokensAt(now)
	if missing <= 0 {
		return 0
	}
	return max(time.Millisecond, time.Duration(missing/float64(b.lim.Limit())*float64(time.Second)))
}

// leave removes w, which gave up, and wakes the new first waiter.
func (b *budget) leave(w *waiter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i := slices.Index(b.queue, w); i >= 0 {
		b.queue = slices.Delete(b.queue, i, i+1)
	}
	b.wakeFirst()
}

// wakeFirst tells the first waiter it is first; b.mu is held.
func (b *budget) wakeFirst() {
	if len(b.queue) > 0 {
		select {
		case b.queue[0].wake <- struct{}{}:
		default:
		}
	}
}

// giveBack returns a place taken and not used.
func (b *budget) giveBack(place *rate.Reservation, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	place.CancelAt(now)
	b.wakeFirst()
}

// lower halves b's pace after a usage-limit answer, unless it was halved
// within lowerEvery (the answers of requests sent before the first
// halving), or drops it to one call a minute for a lasting limit; it
// returns the pace and whether it changed.
func (b *budget) lower(now time.Time, lasting bool) (perMinute, configured int, changed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.limitedAt = now
	switch {
	case b.perMinute == 1:
		return b.perMinute, b.configured, false
	case lasting:
		// One probe a minute, the first a minute from now.
		b.set(now, 1)
		if b.lim.TokensAt(now) >= 1 {
			b.lim.ReserveN(now, 1)
		}
	case now.Sub(b.loweredAt) < lowerEvery:
		return b.perMinute, b.configured, false
	default:
		b.set(now, max(1, b.perMinute/2))
	}
	b.loweredAt = now
	return b.perMinute, b.configured, true
}

// recover grows a lowered budget back by a quarter of its configured pace
// for each recoverEvery without a rate-limit answer, and returns the pace
// and whether it grew; b.mu is held.
func (b *budget) recover(now time.Time) (int, bool) {
	if b.perMinute == b.configured || now.Sub(b.limitedAt) < recoverEvery {
		return b.perMinute, false
	}
	b.set(now, min(b.configured, b.perMinute+max(1, b.configured/4)))
	b.limitedAt = now
	return b.perMinute, true
}

// set changes b's pace to n requests a minute; b.mu is held.
func (b *budget) set(now time.Time, n int) {
	burst, r := bucket(n)
	b.lim.SetLimitAt(now, r)
	b.lim.SetBurstAt(now, burst)
	b.perMinute = n
}

// ShareQuotas tells the client that it makes f (0 < f <= 1) of the
// Calendar requests of several replicas that spend one project's quotas
// together, as the share of the subscriptions it holds: the project's
// budget becomes f of CALENDAR_QUOTA_PER_MINUTE, and so does the service
// account's own user budget when it reads calendars shared with it (every
// replica's reads count against that one user). The budgets of
// impersonated users and of people's own accounts are left whole: each
// calendar is read by the replica that holds its subscriptions. Without
// it, two replicas each spent the whole project's quota at start-up, and
// Google refused their excess.
func (s *Source) ShareQuotas(f float64) {
	f = min(max(f, 0), 1)
	now := s.quota.now()
	s.quota.project.share(now, f)
	if !s.cfg.Impersonate && s.creds.clientEmail != "" {
		s.quota.user(s.creds.clientEmail).share(now, f)
	}
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

// Demand is what syncing calendars once per resync interval asks of the
// Calendar quotas: the budget it asks most of, relative to what it gives.
type Demand struct {
	// PerMinute is the calls a minute the calendars that count against
	// the budget need; Quota is what the budget gives.
	PerMinute float64
	Quota     int
	// Scope is "project" or "user"; Principal names the user's.
	Scope, Principal string
	// Calendars is how many calendars count against it.
	Calendars int
}

// Ratio is PerMinute over Quota: above 1, the budget cannot cover a sync
// of each calendar every interval.
func (d Demand) Ratio() float64 {
	if d.Quota == 0 {
		return 0
	}
	return d.PerMinute / float64(d.Quota)
}

// Demand returns what one incremental sync of each of calendarIDs per
// resync asks of the budget it asks most of: the project's, or that of
// the user most calendars count against (see quota). Reminders' checks
// and full syncs come on top.
func (s *Source) Demand(ctx context.Context, calendarIDs []string, resync time.Duration) Demand {
	if resync <= 0 || len(calendarIDs) == 0 {
		return Demand{}
	}
	perCalendar := float64(time.Minute) / float64(resync)
	byUser := map[string]int{}
	for _, id := range calendarIDs {
		byUser[s.reader(ctx, id)]++
	}
	worst := Demand{PerMinute: perCalendar * float64(len(calendarIDs)), Quota: s.quota.project.configured, Scope: "project", Calendars: len(calendarIDs)}
	for p, n := range byUser {
		d := Demand{PerMinute: perCalendar * float64(n), Quota: s.quota.perUser, Scope: "user", Principal: p, Calendars: n}
		if d.Ratio() > worst.Ratio() {
			worst = d
		}
	}
	return worst
}
