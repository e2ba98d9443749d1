package notify

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot/attempt"
)

// Outcome classes of one Slack API attempt, as Config.Observe receives them.
const (
	ClassOK          = attempt.OK
	ClassRateLimited = attempt.RateLimited
	ClassServerError = attempt.ServerError
	ClassNetwork     = attempt.Network
	ClassPermanent   = attempt.Permanent
)

// errConfirmed ends a call whose earlier attempt turned out to have worked.
var errConfirmed = errors.New("confirmed delivered")

// transientCodes are Slack error codes that say "try again later".
var transientCodes = map[string]bool{
	"internal_error":      true,
	"fatal_error":         true,
	"service_unavailable": true,
	"request_timeout":     true,
	"team_added_to_org":   true,
}

// classify sorts an attempt's error into an outcome class, and for rate
// limits returns how long Slack asked us to wait.
func classify(err error) (class string, wait time.Duration) {
	if err == nil {
		return ClassOK, 0
	}
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return ClassRateLimited, max(rl.RetryAfter, time.Second)
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) {
		switch {
		case sc.Code == http.StatusTooManyRequests:
			return ClassRateLimited, time.Second
		case sc.Code >= 500:
			return ClassServerError, 0
		}
		return ClassPermanent, 0 // a 404 or 403 from a wrong SLACK_API_URL or a proxy
	}
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		switch {
		case se.Err == "ratelimited":
			return ClassRateLimited, time.Second
		case transientCodes[se.Err]:
			return ClassServerError, 0
		}
		// Slack reports every condition that passes by itself through 429,
		// 5xx or the codes above; any other code needs a person, and
		// retrying it forever would stall the subscription.
		return ClassPermanent, 0
	}
	return ClassNetwork, 0 // timeouts, refused connections, undecodable answers
}

// policy says how call makes its attempts.
type policy struct {
	// channel, when set, paces the attempts to Config.Interval per channel.
	channel string
	// attempts bounds the attempts; Config.MaxAttempts if zero.
	attempts int
	// confirm, when set, looks for the work of an attempt that failed in a
	// way that may hide success.
	confirm func(context.Context) bool
}

// call runs one Slack API method with pacing and retries, calling Observe
// once per attempt. When an attempt fails in a way that may hide success
// (5xx, timeout, network) and p.confirm is set, confirm runs before the next
// attempt; if it reports the work done, call returns errConfirmed. It returns
// the last error, unwrapped, so explain can read Slack's error code.
func (s *Slack) call(ctx context.Context, method string, p policy, fn func(context.Context) error) error {
	channel, confirm, attempts := p.channel, p.confirm, p.attempts
	if attempts <= 0 {
		attempts = s.cfg.MaxAttempts
	}
	backoff := s.cfg.Backoff
	var err error
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err // nothing sent: the attempt would fail at once
		}
		if channel != "" {
			if wait := s.pace.reserve(channel, s.cfg.Now()); wait > 0 {
				if err := s.cfg.Sleep(ctx, wait); err != nil {
					return err
				}
			}
		}
		actx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
		err = fn(actx)
		cancel()
		class, wait := classify(err)
		if s.cfg.Observe != nil {
			s.cfg.Observe(method, class)
		}
		switch class {
		case ClassOK:
			return nil
		case ClassPermanent:
			return err
		}
		if ctx.Err() != nil {
			return err
		}
		if attempt >= attempts {
			// Out of attempts: a last look, so that a post Slack did
			// accept is not reported as failed and sent again later.
			if class != ClassRateLimited && confirm != nil && confirm(ctx) {
				return errConfirmed
			}
			return err
		}
		if class == ClassRateLimited {
			if channel != "" {
				s.pace.hold(channel, s.cfg.Now().Add(wait))
			}
		} else {
			wait = backoff
			backoff = min(2*backoff, s.cfg.MaxBackoff)
		}
		s.log.DebugContext(ctx, "slack call retry", "call", method, "class", class, "attempt", attempt, "wait", wait, "err", err)
		if err := s.cfg.Sleep(ctx, wait); err != nil {
			return err
		}
		if class != ClassRateLimited && confirm != nil && confirm(ctx) {
			return errConfirmed
		}
	}
}

// pacer spaces calls to one channel at least interval apart. Slots are
// reserved before waiting, so concurrent callers queue instead of bursting.
type pacer struct {
	interval time.Duration
	mu       sync.Mutex
	next     map[string]time.Time // channel -> earliest next call
}

// reserve books the next slot for channel and returns how long to wait for it.
func (p *pacer) reserve(channel string, now time.Time) time.Duration {
	if p.interval <= 0 {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	slot := p.next[channel]
	if slot.Before(now) {
		slot = now
	}
	p.next[channel] = slot.Add(p.interval)
	return slot.Sub(now)
}

// hold keeps channel quiet until at least until, after Slack said to wait.
func (p *pacer) hold(channel string, until time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next[channel].Before(until) {
		p.next[channel] = until
	}
}
