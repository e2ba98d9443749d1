package scheduler

import (
	"context"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Source reads the meetings of a subscription's calendar.
type Source interface {
	// Meetings returns the meetings that start in (from, to]. An error that
	// reports Permanent() == true (see meetingbot.IsPermanent) needs an
	// operator; any other error is retried on the next sweep.
	Meetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error)
	// Meeting reads one instance afresh, for the check just before its
	// reminder goes out: the meeting as it is now (its Start tells a
	// move), or an error matching meetingbot.ErrGone when it is no longer
	// a meeting to remind of (cancelled, deleted, declined).
	Meeting(ctx context.Context, sub meetingbot.Subscription, eventID string) (meetingbot.Meeting, error)
}

// FreshSource is a Source whose Meetings may answer from a mirror of the
// calendar kept by sync (package mirror). The check just before several
// reminders due at one instant go out reads them with FreshMeetings
// instead, which syncs the calendar first, so that it is as fresh as
// reading each of them.
type FreshSource interface {
	Source
	FreshMeetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error)
}

// Notifier delivers reminders.
type Notifier interface {
	// Notify delivers one reminder and returns where it landed. A
	// permanent error (meetingbot.IsPermanent) is recorded as failed and
	// not retried; an error matching meetingbot.ErrUnconfirmed (Slack may
	// hold the message) is looked up before any resend; any other error is
	// retried on the next sweep.
	Notify(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, error)
	// NotifyDigest delivers reminders of one subscription due at one
	// instant (at most meetingbot.MaxDigest) as one message, whose receipt
	// stands for each of them and in which Delivered finds each; its
	// errors are Notify's.
	NotifyDigest(ctx context.Context, rs []meetingbot.Reminder) (meetingbot.Receipt, error)
	// Delivered reports whether a reminder with r.Key already reached its
	// destination; it is asked after a crash or an unconfirmed send. It
	// returns meetingbot.ErrUnknown when it can never tell, and another
	// error when it cannot tell now.
	Delivered(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, bool, error)
}

// DestinationLookup is a Notifier that can look a subscription's
// destination up ahead of its reminders (a DM's user and conversation), so
// that the first reminder to a destination after a start goes out at its
// trigger rather than a lookup's round trips after it. A timer calls it
// beside its check, a second before the trigger, with until the trigger to
// finish; a destination already known costs nothing. Its error is only
// advice: Notify looks the destination up again and reports what fails.
type DestinationLookup interface {
	LookUp(ctx context.Context, sub meetingbot.Subscription) error
}

// Pacer is a Notifier some of whose sends keep to a pace of their own (a
// person's status, at users.profile.set's Tier 3). Pace waits for r's turn
// before the scheduler takes a send slot for it, so that a wave of such
// sends (a company's 09:00 statuses) waits outside the slots and the
// reminders due at the same instant go out on time; it answers at once
// for the others. An error matching meetingbot.ErrPastGrace says r's turn
// comes after the last instant it may go out: r is skipped, recorded with
// meetingbot.ReasonRateLimited.
type Pacer interface {
	Pace(ctx context.Context, r meetingbot.Reminder) error
}

// Editor edits reminders already sent. A Notifier that implements it gets
// its reminders followed: when a reminded meeting moves before it starts,
// is cancelled, or moves back, each sweep that sees it has the message
// edited to say so (see follow.go).
type Editor interface {
	// Edit rewrites the message of f.Reminder at f.Message to say f.Kind.
	// Making the same edit twice must show nothing twice. A permanent error
	// (meetingbot.IsPermanent: the message deleted, its channel gone,
	// Slack refusing edits) ends the edits of that message; any other is
	// retried on the next sweep.
	Edit(ctx context.Context, f meetingbot.Follow) error
}

// Ledger is the state the scheduler keeps between sweeps; *sqlite.Store
// provides it. Claims belong to the Ledger that made them: one Ledger per
// process.
type Ledger interface {
	// Cursor returns a subscription's cursor, the instant up to which its
	// sweep is complete, and whether it has one.
	Cursor(ctx context.Context, subscription string) (time.Time, bool, error)
	// AdvanceCursors moves cursors forward, never back.
	AdvanceCursors(ctx context.Context, cursors map[string]time.Time) error
	Entries(ctx context.Context, subscription string, keys []string) (map[string]meetingbot.Entry, error)
	// Orphans lists the claims in flight no other live process may finish,
	// of one subscription, or of all when subscription is empty.
	Orphans(ctx context.Context, subscription string, now time.Time) ([]meetingbot.Entry, error)
	// Claim takes a key at now until leaseUntil; a live process's claim
	// is never taken.
	Claim(ctx context.Context, e meetingbot.Entry, now, leaseUntil time.Time) (meetingbot.ClaimStatus, meetingbot.Entry, error)
	// Renew extends a claim held; Record ends it with an outcome; Release
	// gives it up unconfirmed, for a lookup before any resend.
	Renew(ctx context.Context, e meetingbot.Entry, leaseUntil time.Time) error
	Record(ctx context.Context, e meetingbot.Entry, now time.Time) error
	Release(ctx context.Context, e meetingbot.Entry, reason string) error
	Prune(ctx context.Context, before time.Time) (int64, error)
	// Followed lists the sent entries of a subscription whose meeting, as
	// their message names it now (Entry.Edit.MovedTo when it says the
	// meeting moved, else Entry.Start), starts after now.
	Followed(ctx context.Context, subscription string, now time.Time) ([]meetingbot.Entry, error)
	// ClaimEdit takes the edit of a sent entry's message as Claim takes a
	// send, and returns the entry as it is now: Claimed, Busy (another
	// live process is editing it) or Done (nothing to edit, or edits given
	// up). RecordEdit ends the claim with e.Edit.
	ClaimEdit(ctx context.Context, e meetingbot.Entry, now, leaseUntil time.Time) (meetingbot.ClaimStatus, meetingbot.Entry, error)
	RecordEdit(ctx context.Context, e meetingbot.Entry) error
}

// Holder is a Ledger whose claims another process cannot take while this
// one's heartbeat is fresh, whatever their leases say (postgres.Store):
// a claim's lease then only covers the time a process's death takes to
// show, and a send may last longer than it. Hold returns a context that
// ends, with a cause, when this process can no longer be sure of its
// claims (its heartbeat not renewed in time); a send made with it is cut
// then, left unconfirmed, and looked up in Slack before any resend.
type Holder interface {
	Hold(ctx context.Context) (context.Context, context.CancelFunc)
}

// Stalls is a Ledger shared by replicas that can tell which claims of
// other replicas will soon be free (postgres.Store): a replica killed
// mid-send leaves a claim that must go out before its meeting starts, and
// its subscription's lease reaches another replica only at that one's
// next round after the lease runs out. Stalled returns the claims in
// flight of other processes that may be free within d of now, each with
// that instant, on now's clock, as its LeaseUntil.
type Stalls interface {
	Stalled(ctx context.Context, d time.Duration, now time.Time) ([]meetingbot.Entry, error)
}

// Observer is told what the scheduler does, for metrics and health. Its
// methods are called from several goroutines at once.
type Observer interface {
	// Recorded is called for each outcome the scheduler records in the
	// ledger: sent, skipped, failed (permanently or for now).
	Recorded(e meetingbot.Entry)
	// Swept is called after each sweep of a subscription with the instant
	// it swept at and how long it took; err is nil when the sweep
	// completed and the cursor moved to now.
	Swept(sub meetingbot.Subscription, now time.Time, took time.Duration, err error)
	// Ticked is called after each round (Run) or Tick with how long it
	// took to start (Run) or finish (Tick) its sweeps, and the ledger's
	// failure since the last call, if any: it could not be read or
	// written, which no subscription's Swept reports.
	Ticked(now time.Time, took time.Duration, err error)
	// Planned is called with the number of timers armed, when it changes.
	Planned(armed int)
	// Checked is called with the outcome of each check before a timer's
	// reminder goes out.
	Checked(outcome meetingbot.CheckOutcome)
	// Reading is called with the number of calendar reads in flight, when
	// it changes.
	Reading(inFlight int)
	// Edited is called for each edit of a sent reminder that went through
	// and was recorded; e.Edit.Kind says which.
	Edited(e meetingbot.Entry)
}
