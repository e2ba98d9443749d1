package meetingbot

import "time"

// EditKind says what a sent reminder's message tells of its meeting now,
// after the bot edited it because the meeting moved or was cancelled
// (docs/design.md, "A reminder follows its meeting").
type EditKind string

// Edit kinds. Metrics count edits by kind; the ledger keeps the last one.
const (
	// NotEdited: the message is as it was posted.
	NotEdited EditKind = ""
	// EditMoved: the message says the meeting moved to another start
	// (Edit.MovedTo), and strikes the time it named.
	EditMoved EditKind = "moved"
	// EditCancelled: the message says the meeting was cancelled (or
	// deleted), and strikes its time.
	EditCancelled EditKind = "cancelled"
	// EditDeclined: the message says the calendar's owner declined the
	// meeting ("You declined"), and strikes its time; it keeps the answer
	// buttons, so that they may change their mind.
	EditDeclined EditKind = "declined"
	// EditRestored: the message was edited back to as it was posted: the
	// meeting moved back to the start the reminder named.
	EditRestored EditKind = "restored"
)

// Changed reports whether a message edited to k says that its meeting is
// no longer when the reminder said: moved, cancelled or declined.
func (k EditKind) Changed() bool { return k == EditMoved || k == EditCancelled || k == EditDeclined }

// Gone reports whether a message edited to k says that its meeting is not
// to be reminded of any more: cancelled or declined.
func (k EditKind) Gone() bool { return k == EditCancelled || k == EditDeclined }

// Edit is what the ledger knows of the edits of one sent reminder's
// message. Instants are UTC.
type Edit struct {
	// Kind is what the message says now; MovedTo is the start it names
	// when Kind is EditMoved.
	Kind    EditKind
	MovedTo time.Time
	// Count is how many edits were recorded; At is when the last was.
	Count int
	At    time.Time
	// Code is ReasonPermanent when editing the message was given up (it
	// was deleted, its channel is gone, Slack refuses edits), and
	// ReasonTransient when the last attempt failed and the next sweep
	// tries again; Reason says the same for people. Both are empty after
	// an edit that went through.
	Code   ReasonCode
	Reason string
	// Owner holds the claim on an edit in flight, until LeaseUntil where
	// liveness cannot be told; empty when none is.
	Owner      string
	LeaseUntil time.Time
}

// Follow is one edit of a reminder already sent, to say what became of
// its meeting.
type Follow struct {
	// Reminder is the reminder as it was sent: its key, subscription,
	// offset, trigger and lateness. Its Meeting starts when the reminder
	// said and carries the latest details known (title, links); its Title
	// is empty when they are not known, as for a meeting the calendar no
	// longer shows.
	Reminder Reminder
	// Message is where the reminder landed in Slack.
	Message Receipt
	// SentAt is when the reminder was sent, so that a message restored
	// reads as it was posted.
	SentAt time.Time
	// Kind is what the message is to say: EditMoved, EditCancelled,
	// EditDeclined, or EditRestored to put it back as posted.
	Kind EditKind
	// MovedTo is the meeting's new start, when Kind is EditMoved.
	MovedTo time.Time
	// Follows is true, when Kind is EditMoved, if a reminder for the new
	// start is still to come: the new start is ahead, and no reminder sent
	// before this one already named it.
	Follows bool
}
