// Package attempt is what the bot's API clients share about one attempt of a
// remote call: the names of its outcome classes, which the Calendar and Slack
// clients report and the metrics count, and the wait between attempts.
package attempt

import (
	"context"
	"time"
)

// Outcome classes of one attempt of a remote API call.
const (
	OK          = "ok"
	RateLimited = "rate_limited"
	ServerError = "server_error"
	Network     = "network"
	Permanent   = "permanent"
)

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
