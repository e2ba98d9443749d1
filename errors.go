package meetingbot

import (
	"errors"
	"fmt"
)

// ErrUnknown is returned by Notifier.Delivered when it cannot tell whether a
// reminder went out.
var ErrUnknown = errors.New("delivery unknown")

// ErrUnconfirmed marks a Notifier.Notify error after which Slack may hold
// the message: the post may have been accepted (a timeout, a 5xx, an answer
// lost on the way back, an ok without a message reference) and no lookup
// could tell. The scheduler keeps such a reminder in the "look in Slack
// first" state, and asks Delivered before any resend.
var ErrUnconfirmed = errors.New("delivery unconfirmed")

// ErrGone is returned by a source asked for one meeting when that instance
// is no longer a meeting to remind of: deleted, cancelled, declined by the
// calendar's owner, made all-day, or turned into an event type that is not
// a meeting.
var ErrGone = errors.New("meeting gone")

// ErrDeclined is the ErrGone of a meeting its calendar's owner declined:
// an error matching it matches ErrGone too. A reminder of it says so
// ("You declined") rather than "Cancelled".
var ErrDeclined = fmt.Errorf("declined by the calendar's owner: %w", ErrGone)

// ErrPastGrace is what a Notifier's Pace answers when a reminder's turn
// at a provider's rate limit comes after the last instant it may go out
// (StartGrace after its meeting's start): it is skipped, recorded with
// ReasonRateLimited, rather than sent late.
var ErrPastGrace = errors.New("its turn at the rate limit comes too late")

// Permanent marks err as permanent: retrying will not help until an operator
// acts (a missing share, a bad token, a channel the bot is not in).
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

type permanentError struct{ err error }

func (e permanentError) Error() string   { return e.err.Error() }
func (e permanentError) Unwrap() error   { return e.err }
func (e permanentError) Permanent() bool { return true }

// IsPermanent reports whether any error in err's chain says Permanent() ==
// true. Errors from other packages opt in by implementing that method.
func IsPermanent(err error) bool {
	var p interface{ Permanent() bool }
	return errors.As(err, &p) && p.Permanent()
}
