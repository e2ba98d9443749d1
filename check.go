package meetingbot

// CheckOutcome is what the check of a meeting against the calendar, just
// before its planned reminder goes out, found.
type CheckOutcome string

// Check outcomes.
const (
	// CheckConfirmed: the meeting is there with the same start; the
	// reminder goes out.
	CheckConfirmed CheckOutcome = "confirmed"
	// CheckMoved: the meeting starts at another time now; nothing goes out
	// for the old one, and the new start is planned.
	CheckMoved CheckOutcome = "moved"
	// CheckCancelled: the meeting is no longer one to remind of; nothing
	// goes out.
	CheckCancelled CheckOutcome = "cancelled"
	// CheckChanged: the meeting is there with the same start, but the
	// reminder is no longer one of its own: its popup reminder was changed
	// or removed (Subscription.OnCalendar), or a rule now skips it
	// (Subscription.Rules). Nothing goes out; the sweep plans what is.
	CheckChanged CheckOutcome = "changed"
	// CheckUnknown: the calendar could not answer in time; the reminder
	// goes out on the last sweep's reading.
	CheckUnknown CheckOutcome = "unknown"
)
