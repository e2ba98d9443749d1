package calendar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/retry"
)

// Names of the API calls reported to Config.Observe and Config.QuotaWait.
const (
	callEventsList = "events.list"
	callEventsGet  = "events.get"
)

// classify says what a failed attempt means, how long the server asked to
// wait (0 when it did not say), and for a usage-limit answer
// (usageLimitOf) which limit it says is reached.
func classify(err error) (class retry.Class, retryAfter time.Duration, limit *usageLimit) {
	if meetingbot.IsPermanent(err) {
		return retry.Permanent, 0, nil
	}
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		retryAfter = parseRetryAfter(gerr.Header.Get("Retry-After"), time.Now())
		if l, ok := usageLimitOf(gerr); ok {
			return retry.RateLimited, retryAfter, &l
		}
		if gerr.Code >= 500 {
			return retry.ServerError, retryAfter, nil
		}
		return retry.Permanent, 0, nil
	}
	var rerr *oauth2.RetrieveError
	if errors.As(err, &rerr) {
		if rerr.Response == nil {
			return retry.Network, 0, nil
		}
		switch code := rerr.Response.StatusCode; {
		case code == http.StatusTooManyRequests:
			return retry.RateLimited, parseRetryAfter(rerr.Response.Header.Get("Retry-After"), time.Now()), nil
		case code >= 500 || code == http.StatusRequestTimeout:
			return retry.ServerError, 0, nil
		}
		return retry.Permanent, 0, nil
	}
	// Anything else failed on the way: a refused or cut connection, a
	// truncated body, a timeout.
	return retry.Network, 0, nil
}

// unauthorized reports whether err is a 401 for the credentials: not one
// refusing a watch's address (addressUnverified), which no new token
// changes and no connection is to blame for.
func unauthorized(err error) bool {
	var gerr *googleapi.Error
	return errors.As(err, &gerr) && gerr.Code == http.StatusUnauthorized && !addressUnverified(err)
}

func hasReason(err *googleapi.Error, reason string) bool {
	for _, e := range err.Errors {
		if e.Reason == reason {
			return true
		}
	}
	return false
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// withRetries runs try, one request of call, until it succeeds, fails
// permanently, runs out of attempts or ctx is done, reporting each
// attempt's class to Observe. Each attempt first waits for the quotas. A
// 401 renews the access token once. A permanent failure comes back
// explained and marked meetingbot.Permanent; an error that is
// meetingbot.ErrGone is the answer, returned as is.
func (s *Source) withRetries(ctx context.Context, call, reading string, try func() error) error {
	calendarID, _ := meetingbot.ParseReading(reading)
	renewed := false
	principal := s.reader(ctx, reading)
	for n := 1; ; n++ {
		waited, err := s.quota.wait(ctx, principal)
		if s.cfg.QuotaWait != nil {
			s.cfg.QuotaWait(call, waited)
		}
		if err != nil {
			return fmt.Errorf("calendar %s: %s: waiting for the quota: %w", calendarID, call, err)
		}
		err = try()
		if err == nil || errors.Is(err, meetingbot.ErrGone) {
			s.observe(call, retry.OK)
			return err
		}
		if ctx.Err() != nil {
			s.observe(call, retry.Network)
			return fmt.Errorf("calendar %s: %s: %w", calendarID, call, ctx.Err())
		}
		class, wait, limit := classify(err)
		s.observe(call, class)
		if limit != nil {
			// Google says the budget is more than it gives now: see quota.
			s.quota.limited(principal, *limit)
			if limit.lasting() {
				// A day's limit, or Calendar's own: no retry within
				// seconds cures it, and the budget now paces a probe a
				// minute. The caller answers from its last reading.
				return fmt.Errorf("calendar %s: %s: %w", calendarID, call, usageLimitError{*limit, concise(err)})
			}
		}
		if class == retry.Permanent && !renewed && unauthorized(err) {
			// An access token revoked or expired early is not the
			// operator's problem: get a new one, once, and try again.
			renewed = true
			s.forget(reading)
			n--
			continue
		}
		if class == retry.Permanent && renewed && unauthorized(err) {
			s.refused(ctx, reading, err)
		}
		if class == retry.Permanent {
			return s.explain(calendarID, err)
		}
		if limit != nil {
			err = usageLimitError{*limit, concise(err)}
		}
		if n >= s.cfg.Retry.Attempts() {
			return fmt.Errorf("calendar %s: %s: %s after %d attempts: %w", calendarID, call, class, n, concise(err))
		}
		if wait == 0 {
			wait = s.cfg.Retry.Backoff(n)
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return fmt.Errorf("calendar %s: %s: %s, retry in %v is past the deadline: %w", calendarID, call, class, wait, concise(err))
		}
		s.log.Debug("retrying "+call, "calendar", calendarID, "class", class, "attempt", n, "wait", wait)
		if err := s.sleep(ctx, wait); err != nil {
			return fmt.Errorf("calendar %s: %s: %s, then %w", calendarID, call, class, err)
		}
	}
}

func (s *Source) observe(call string, class retry.Class) {
	if s.cfg.Observe != nil {
		s.cfg.Observe(call, class)
	}
}

// oauthErrorCode returns RFC 6749's error code of a token endpoint answer.
func oauthErrorCode(rerr *oauth2.RetrieveError) string {
	if rerr.ErrorCode != "" {
		return rerr.ErrorCode
	}
	var body struct {
		Error string `json:"error"`
	}
	json.Unmarshal(rerr.Body, &body)
	return body.Error
}
