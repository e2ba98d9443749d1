package meetingbot

import (
	"context"
	"errors"
	"time"
)

// When the calendar cannot answer (DESIGN.md): the words the mirror, the
// Calendar client and the scheduler share about a read the quota cannot
// serve in time.

// ErrQuotaWait is returned by a Calendar call that would have waited for
// the quota past its context's deadline: it was not sent, and nothing of
// the quota was spent on it.
var ErrQuotaWait = errors.New("the Calendar quota has no place for the call before its answer is needed")

type urgencyKey struct{}

// WithUrgency returns ctx carrying at, the instant by which the Calendar
// calls made with it are needed: when the quota cannot serve every call
// at once, the one needed soonest goes first. A call without one is as
// urgent as its context's deadline, and one without either comes last.
func WithUrgency(ctx context.Context, at time.Time) context.Context {
	return context.WithValue(ctx, urgencyKey{}, at)
}

// Urgency returns the instant by which ctx's Calendar calls are needed:
// WithUrgency's, else ctx's deadline; ok is false when it has neither.
func Urgency(ctx context.Context) (at time.Time, ok bool) {
	if at, ok := ctx.Value(urgencyKey{}).(time.Time); ok {
		return at, true
	}
	return ctx.Deadline()
}
