package meetingbot

import (
	"errors"
	"time"
)

// Outcome is the state of a ledger entry.
type Outcome string

// Outcomes. Sending is a claim in flight; the others are recorded ends,
// final except a Failed entry with Retryable set, which the next sweep may
// claim again.
const (
	Sending Outcome = "sending"
	Sent    Outcome = "sent"
	Skipped Outcome = "skipped"
	Failed  Outcome = "failed"
)

// ReasonCode says, for machines, why an entry ended as it did; metrics,
// the audit and the health page switch on it. Entry.Reason holds the same
// for people, with the detail.
type ReasonCode string

// Reason codes. An entry sent on time, the common case, has none.
const (
	// ReasonStarted: skipped, the meeting had started before the reminder
	// could go out (the bot was down or stalled, or the meeting was created
	// or moved too late).
	ReasonStarted ReasonCode = "started"
	// ReasonNoLongerDue: skipped, an interrupted send whose meeting moved
	// or was cancelled since; it was not found in Slack.
	ReasonNoLongerDue ReasonCode = "no_longer_due"
	// ReasonSubscriptionRemoved: skipped, an interrupted send of a
	// subscription no longer configured.
	ReasonSubscriptionRemoved ReasonCode = "subscription_removed"
	// ReasonPermanent: failed, and retrying will not help until an
	// operator acts (see Permanent).
	ReasonPermanent ReasonCode = "permanent"
	// ReasonTransient: failed for now (a 429, a 5xx, a network error); the
	// next sweep retries.
	ReasonTransient ReasonCode = "transient"
	// ReasonStopped: not sent because the process was stopping; the next
	// sweep retries.
	ReasonStopped ReasonCode = "stopped"
	// ReasonUnconfirmed: in flight with no owner; a send that may have
	// reached Slack, to be looked up before any resend.
	ReasonUnconfirmed ReasonCode = "unconfirmed"
	// ReasonInterruptedConfirmed: sent, found in Slack after an
	// interrupted or unconfirmed send.
	ReasonInterruptedConfirmed ReasonCode = "interrupted_confirmed"
	// ReasonResent: sent again after an interrupted send that Slack could
	// not confirm or deny.
	ReasonResent ReasonCode = "resent"
	// ReasonDigest: sent in one message with the other reminders of its
	// subscription due at the same instant (more than a handful of
	// meetings starting together).
	ReasonDigest ReasonCode = "digest"
	// ReasonRateLimited: skipped, its turn at the provider's rate limit
	// came more than StartGrace after its meeting's start (a status at a
	// company's 09:00, paced at Slack's Tier 3).
	ReasonRateLimited ReasonCode = "rate_limited"
	// ReasonReminderChanged: skipped, a popup reminder of the meeting
	// (Subscription.OnCalendar) changed in Google Calendar after it went
	// out: its new time is the same reminder, not sent twice.
	ReasonReminderChanged ReasonCode = "reminder_changed"
)

// Entry is one ledger row: a trigger key of a subscription and what became
// of it. Instants are UTC.
type Entry struct {
	Subscription string
	Kind         Kind // its subscription's: which engine's entry it is
	Key          string
	EventID      string
	Offset       time.Duration
	Start        time.Time // the meeting's start
	TriggerAt    time.Time // Start - Offset
	Outcome      Outcome
	Code         ReasonCode // why it ended so, for machines
	Reason       string     // the same for people, with the detail
	Retryable    bool       // a failed entry the next sweep retries
	Late         bool       // found due after its trigger time had passed
	Attempts     int        // claims taken on this key
	Channel      string     // Slack channel of the sent message
	MessageTS    string     // Slack ts of the sent message
	Owner        string     // the process that holds or held the claim
	LeaseUntil   time.Time
	ClaimedAt    time.Time
	RecordedAt   time.Time // when the outcome was recorded
	// Edit is what the message of a sent entry says of its meeting now,
	// and the claim on an edit in flight (see Follow).
	Edit Edit
}

// Final reports whether nothing more will be done for the entry.
func (e Entry) Final() bool {
	return e.Outcome != Sending && !(e.Outcome == Failed && e.Retryable)
}

// ClaimStatus says what a ledger's Claim found and did.
type ClaimStatus int

// Claim statuses.
const (
	// Claimed: the key was free (new, or a retryable failure) and is now the
	// caller's to send.
	Claimed ClaimStatus = iota
	// Orphaned: the key was claimed by a send that may have reached Slack
	// and was never recorded: its process died (or, where liveness cannot
	// be told, its lease ran out), or its send ended unconfirmed and was
	// released. It is now the caller's, who must find out whether the
	// reminder went out before sending again.
	Orphaned
	// Busy: another live process holds the claim. A live owner's claim is
	// never taken, whatever its lease says.
	Busy
	// Done: the key's outcome is final; nothing to do.
	Done
)

func (c ClaimStatus) String() string {
	return [...]string{"claimed", "orphaned", "busy", "done"}[c]
}

// Delivery is a reminder message as Slack holds it, read back from the
// message's metadata: what the audit compares with the ledger.
type Delivery struct {
	Key          string
	Subscription string
	EventID      string
	Start        time.Time
	Offset       time.Duration
	Channel      string
	TS           string
	Posted       time.Time // when Slack stored the message, from its ts
}

// ErrClaimLost is returned by a ledger's Record, Renew and Release when the
// caller no longer holds the claim: another process took the key over.
// Both stores (SQLite and PostgreSQL) return it.
var ErrClaimLost = errors.New("claim lost")
