// Package retry is what the bot's API clients share about retrying a remote
// call: the outcome Class of one attempt, which the Calendar and Slack
// clients report and the metrics count; one jittered backoff Policy; and a
// Sleep that ends with its context. The retry loops themselves stay with
// the clients, where they differ for real (Slack looks before it posts
// again, Google renews a token).
package retry

import (
	"context"
	"math/rand/v2"
	"time"
)

// Class is the outcome of one attempt of a remote API call.
type Class string

// Outcome classes.
const (
	OK          Class = "ok"
	RateLimited Class = "rate_limited" // the server asked us to slow down
	ServerError Class = "server_error" // a 5xx, or an error code that passes by itself
	Network     Class = "network"      // a timeout, a refused or cut connection
	Permanent   Class = "permanent"    // retrying will not help
)

// Policy bounds the attempts of one call and the waits between them. The
// zero value of each field takes its default.
type Policy struct {
	// MaxAttempts bounds the attempts of one call, the first included; 5
	// by default.
	MaxAttempts int
	// Base is the wait before the first retry, doubled at each retry up to
	// Max; 1s and 30s by default.
	Base, Max time.Duration
}

// Defaults of a Policy's fields.
const (
	DefaultMaxAttempts = 5
	DefaultBase        = time.Second
	DefaultMax         = 30 * time.Second
)

// Attempts returns p.MaxAttempts, or its default.
func (p Policy) Attempts() int {
	if p.MaxAttempts <= 0 {
		return DefaultMaxAttempts
	}
	return p.MaxAttempts
}

// Backoff returns the wait before retry number n (1 for the first retry):
// exponential from Base, capped at Max, with "equal jitter", so that calls
// that failed together do not retry together, yet never wait less than
// half the step.
func (p Policy) Backoff(n int) time.Duration {
	base, ceiling := p.Base, p.Max
	if base <= 0 {
		base = DefaultBase
	}
	if ceiling <= 0 {
		ceiling = DefaultMax
	}
	d := base
	for i := 1; i < n && d < ceiling; i++ {
		d *= 2
	}
	d = min(d, ceiling)
	half := d / 2
	return half + rand.N(half+1)
}

// Sleep waits d, or until ctx is done and then returns ctx.Err().
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
