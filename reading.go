package meetingbot

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// When the calendar cannot answer: a reading that fails must not make the
// bot forget what it read before (docs/design.md). These are the words the
// mirror, the Calendar client and the scheduler share about it.

// StaleReason says, for machines, why a calendar was answered from an
// older reading.
type StaleReason string

// Stale reasons.
const (
	// StaleUnavailable: the calendar did not answer (a 5xx, a network
	// error, a timeout), or not before its answer was needed.
	StaleUnavailable StaleReason = "unavailable"
	// StaleQuota: the Calendar quota had no place for the read before its
	// answer was needed (ErrQuotaWait), or Google answered that a usage
	// limit is reached (ErrUsageLimit); the calendars whose reminders come
	// soonest were read first.
	StaleQuota StaleReason = "quota"
)

// StaleReading is the error a Source returns beside the meetings of its
// last reading of a calendar, when it could not read the calendar afresh:
// the meetings are valid, as they were at ReadAt. A sweep plans and sends
// from them, and settles what only a fresh reading can tell (a meeting
// started, moved, cancelled) once one comes.
type StaleReading struct {
	CalendarID string
	ReadAt     time.Time   // when the reading was made
	Why        StaleReason // why it is not newer
	Err        error       // the read that failed
}

func (e *StaleReading) Error() string {
	return fmt.Sprintf("calendar %s answered from its reading of %s (%s): %v",
		e.CalendarID, e.ReadAt.UTC().Format(time.RFC3339), e.Why, e.Err)
}

func (e *StaleReading) Unwrap() error { return e.Err }

// ErrQuotaWait is returned by a Calendar call that would have waited for
// the quota past its context's deadline: it was not sent, and nothing of
// the quota was spent on it.
var ErrQuotaWait = errors.New("the Calendar quota has no place for the call before its answer is needed")

// ErrUsageLimit marks a Calendar call that Google refused for a usage
// limit (403 or 429 of the domain usageLimits: a per-minute quota, the
// project's daily limit, Calendar's own usage limits): the client has
// slowed down, and the caller answers from what it read before.
var ErrUsageLimit = errors.New("a Calendar usage limit is reached")

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

type quotaWaitKey struct{}

// WithQuotaWait returns ctx with a bound on how long a Calendar call made
// with it waits for the quota: one that could not get its place within d
// fails at once with ErrQuotaWait, as one past its context's deadline
// does. The mirror gives it to a routine resync, which has an older
// reading to answer from and must not hold a sweep up.
func WithQuotaWait(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, quotaWaitKey{}, d)
}

// QuotaWait returns how long ctx's Calendar calls may wait for the quota:
// WithQuotaWait's bound or what is left until ctx's deadline, whichever
// is shorter; ok is false when it has neither.
func QuotaWait(ctx context.Context) (d time.Duration, ok bool) {
	d, ok = ctx.Value(quotaWaitKey{}).(time.Duration)
	if deadline, has := ctx.Deadline(); has && (!ok || time.Until(deadline) < d) {
		return time.Until(deadline), true
	}
	return d, ok
}
