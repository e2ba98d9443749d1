package selfservice

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot/internal/clock"
)

// Refusal says why a request to Slack's request URLs was refused: a code
// for metrics (Config.Refused) and tests.
type Refusal string

// The refusals of Slack's request URLs.
const (
	// RefusedUnsigned: no X-Slack-Signature or X-Slack-Request-Timestamp,
	// or a timestamp that is not a number.
	RefusedUnsigned Refusal = "unsigned"
	// RefusedStale: a timestamp more than MaxSkew from the clock.
	RefusedStale Refusal = "stale"
	// RefusedSignature: a signature that does not match the body.
	RefusedSignature Refusal = "signature"
	// RefusedReplayed: a valid request taken before, by any replica.
	RefusedReplayed Refusal = "replayed"
	// RefusedTooLarge: a body over the endpoint's bound (413).
	RefusedTooLarge Refusal = "too_large"
	// RefusedUnchecked: the store could not say whether the request was
	// taken before (503, which Slack retries).
	RefusedUnchecked Refusal = "unchecked"
)

// refusal is the error of a refused request: its code, and the sentence
// the log and the answer say.
type refusal struct {
	reason Refusal
	text   string
}

func (r *refusal) Error() string { return r.text }

// logEvery bounds how often refusals are logged: anyone on the internet
// can send requests to HTTP_ADDR, and one line each would let them fill
// the logs.
const logEvery = time.Minute

// refusals counts refused requests (Config.Refused) and logs them at most
// once per logEvery, each line with how many were refused, by reason,
// since the line before.
type refusals struct {
	log   *slog.Logger
	now   func() time.Time
	count func(Refusal)
	// after runs a function later (time.AfterFunc by default): the line
	// that counts the refusals of a minute is written when the minute
	// ends, even if none follows them.
	after func(time.Duration, func()) clock.Timer

	mu      sync.Mutex
	logged  time.Time // when the last line was written; zero before any
	since   map[Refusal]int
	last    []any       // the path, remote address and error of the last refusal counted
	pending clock.Timer // the flush of since, when it holds refusals
}

// refused counts one refused request and logs it unless a line was
// written within logEvery; then the line written when the minute ends
// counts it.
func (r *refusals) refused(reason Refusal, path, remote string, err error) {
	if r.count != nil {
		r.count(reason)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.since == nil {
		r.since = map[Refusal]int{}
	}
	r.since[reason]++
	r.last = []any{"path", path, "remote", remote, "err", err}
	now := r.now()
	if !r.logged.IsZero() && now.Sub(r.logged) < logEvery && !now.Before(r.logged) {
		if r.pending == nil {
			r.pending = r.afterFunc(r.logged.Add(logEvery).Sub(now), r.flush)
		}
		return
	}
	r.write(now)
}

// flush writes the line of the refusals counted since the last one, if
// any: at the end of the minute that held them back, and at Close.
func (r *refusals) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending != nil {
		r.pending.Stop()
		r.pending = nil
	}
	if len(r.since) > 0 {
		r.write(r.now())
	}
}

// write logs the refusals counted since the last line; r.mu is held.
func (r *refusals) write(now time.Time) {
	total, reasons := 0, make([]string, 0, len(r.since))
	for _, k := range slices.Sorted(maps.Keys(r.since)) {
		total += r.since[k]
		reasons = append(reasons, fmt.Sprintf("%s=%d", k, r.since[k]))
	}
	attrs := append([]any{"refused", total, "reasons", strings.Join(reasons, ",")}, r.last...)
	if fix := refusalFix(r.since); fix != "" {
		attrs = append(attrs, "fix", fix)
	}
	r.logged, r.since, r.last = now, nil, nil
	if r.pending != nil {
		r.pending.Stop()
		r.pending = nil
	}
	r.log.Warn("refused requests to Slack's request URLs (one line a minute at most; meetingbot_slack_requests_refused_total counts each)", attrs...)
}

func (r *refusals) afterFunc(d time.Duration, f func()) clock.Timer {
	if r.after != nil {
		return r.after(d, f)
	}
	return time.AfterFunc(d, f)
}
