package meetingbot

import (
	"encoding/json"
	"errors"
	"time"
)

// Timer is a durable timer (docs/design.md, "Remind me at start: a durable
// timer"): a wait a person created in the bot, such as "remind me when it
// starts", with no outside source to read it again from. Its stored row
// is the truth. It is written before the person is answered, fired once
// at its instant through the ledger's claim, send and record path under
// its Key, and, after a restart or on another replica, fired late rather
// than lost.
//
// A timer is one row of the store: created pending, taken by one process
// at a time under a lease when due, and ended with a final state. Kind
// names what fires it; Payload is that kind's own JSON of what to send.
// Instants are UTC, to the millisecond.
type Timer struct {
	// Key names the timer, and its ledger entry when it fires: the same
	// wait always gets the same key (SnoozeKey), so that a second click,
	// or Slack's retry to another replica, finds the first timer.
	Key string
	// Group holds at most one pending timer: adding a timer while another
	// of its group is pending finds that one instead (a double click on
	// "In 5 min" makes one timer). Empty: the key alone.
	Group string
	// Kind says what fires it (TimerKindSnooze).
	Kind string
	// Subject is whom it is for (a Slack user ID): a person's pending
	// timers are listed, and cancelled, by it.
	Subject string
	// FireAt is its instant.
	FireAt time.Time
	// Until is the last instant it may still fire (a meeting's end);
	// past it, the timer ends skipped. Zero: no such bound.
	Until time.Time
	// Payload is what to send, as the kind's JSON.
	Payload json.RawMessage

	// State is where it is: pending, or a final state.
	State TimerState
	// Code and Reason say why a final state is what it is (sent late,
	// skipped because the meeting was cancelled, failed), for machines
	// and people.
	Code   ReasonCode
	Reason string
	// Next is the key of the timer it moved to (TimerMoved).
	Next string
	// DueAt is when it is next tried: FireAt, or later after a failure
	// that a retry may mend.
	DueAt time.Time
	// Holder is the process firing it now, under a lease until
	// LeaseUntil (on PostgreSQL an instant of the database's clock); empty
	// when nobody holds it.
	Holder     string
	LeaseUntil time.Time
	// Attempts is how many times it was taken.
	Attempts int
	// CreatedAt is when it was stored, DoneAt when it ended.
	CreatedAt, DoneAt time.Time
}

// TimerState is where a durable timer is.
type TimerState string

// Timer states. Every state but TimerPending is final.
const (
	// TimerPending: waiting for its instant, or being fired.
	TimerPending TimerState = "pending"
	// TimerDone: fired; Code says how (sent, sent late, skipped because
	// its meeting was cancelled or had ended, failed for good).
	TimerDone TimerState = "done"
	// TimerMoved: its meeting moved, and the wait follows it under a new
	// key (Next).
	TimerMoved TimerState = "moved"
	// TimerCancelled: the person cancelled it.
	TimerCancelled TimerState = "cancelled"
)

// Timer reason codes, beside the ledger's (ReasonStarted, ReasonPermanent,
// …) that a timer's end may carry too.
const (
	// ReasonSent: done, the message went out (at its instant, or late:
	// Timer.DoneAt tells).
	ReasonSent ReasonCode = "sent"
	// ReasonMeetingCancelled: done, nothing sent: the meeting was
	// cancelled, deleted or declined.
	ReasonMeetingCancelled ReasonCode = "meeting_cancelled"
	// ReasonMeetingEnded: done, nothing sent: the bot was down from the
	// timer's instant until past its Until (the meeting's end).
	ReasonMeetingEnded ReasonCode = "meeting_ended"
	// ReasonMeetingMoved: moved, its wait goes on under Timer.Next.
	ReasonMeetingMoved ReasonCode = "meeting_moved"
	// ReasonCancelledByUser: cancelled by the person it was for.
	ReasonCancelledByUser ReasonCode = "cancelled_by_user"
)

// ErrTimerLost is returned by a store's FinishTimer, MoveTimer and
// RetryTimer when the caller no longer holds the timer: another process
// took it over. Both stores return it.
var ErrTimerLost = errors.New("timer lost")
