package postgres

import (
	"context"
	"errors"
	"sync"
	"time"
)

// How a replica's sends stay its own. A claim in flight is this
// replica's for the others while its heartbeat is fresh (alive_until, on
// the database's clock) or the claim's lease runs, whichever is later
// (see heldByOther). The lease is short, one heartbeat's span, so that a
// replica killed mid-send leaves its reminder to the others within it; a
// send may take longer (Slack paces a channel to about a post a second),
// and is then the replica's by its heartbeat alone. A replica cut off
// from the database cannot renew its heartbeat: Hold ends its sends before
// the others could judge it gone.

// ErrHeartbeatLapsed ends a Hold's context: this replica could not renew
// its heartbeat in time, and the others may soon take its claims.
var ErrHeartbeatLapsed = errors.New("postgres: heartbeat not renewed in time: the other replicas may take this one's claims")

// holdMargin is how long before its last heartbeat's span ends, as this
// process counts it, a Hold's context ends: room for the replicas' clocks
// to run at slightly different rates, and for a claim judged a moment
// late.
func (s *Store) holdMargin() time.Duration { return s.ttl / 4 }

// heldFrom notes a heartbeat written, whose statement was sent at sent
// on this process's clock: the database wrote alive_until after sent,
// so the heartbeat lasts, as the others judge it, at least until
// sent + ttl.
func (s *Store) heldFrom(sent time.Time) {
	s.holdMu.Lock()
	defer s.holdMu.Unlock()
	if until := sent.Add(s.ttl - s.holdMargin()); until.After(s.heldUntil) {
		s.heldUntil = until
	}
}

func (s *Store) held() time.Time {
	s.holdMu.Lock()
	defer s.holdMu.Unlock()
	return s.heldUntil
}

// Hold returns a context that ends with ctx, or with ErrHeartbeatLapsed
// (its cause) once this replica's heartbeat has gone unrenewed for its
// span less a quarter: a send made with it ends before another replica
// could take its claim, however long it lasts while the heartbeat beats.
// It fits scheduler.Holder. Call the CancelFunc when the send is over.
func (s *Store) Hold(ctx context.Context) (context.Context, context.CancelFunc) {
	held, cancel := context.WithCancelCause(ctx)
	var mu sync.Mutex
	var timer *time.Timer
	var arm func()
	arm = func() {
		d := time.Until(s.held())
		mu.Lock()
		defer mu.Unlock()
		switch {
		case held.Err() != nil:
		case d <= 0:
			cancel(ErrHeartbeatLapsed)
		default:
			timer = time.AfterFunc(d, arm)
		}
	}
	arm()
	stop := context.AfterFunc(held, func() {
		mu.Lock()
		defer mu.Unlock()
		if timer != nil {
			timer.Stop()
		}
	})
	return held, func() {
		stop()
		cancel(context.Canceled)
	}
}
