package snooze

import (
	"context"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Source reads the meeting a snooze waits for: the mirror of its calendar
// first (Meetings), then the calendar itself when in doubt (Meeting). The
// scheduler's Source, the mirror, provides it.
type Source interface {
	// Meetings returns the meetings of sub's calendar that start in
	// (from, to].
	Meetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error)
	// Meeting reads one instance afresh, or returns an error matching
	// meetingbot.ErrGone when it is no longer a meeting to remind of
	// (cancelled, deleted, declined).
	Meeting(ctx context.Context, sub meetingbot.Subscription, eventID string) (meetingbot.Meeting, error)
}

// Notifier sends a snooze's DM and finds it again; *notify.Slack provides
// it.
type Notifier interface {
	// NotifySnooze DMs the snooze of as reminder r (its Subscription's
	// Destination is the person) and returns where it landed; moved says
	// the meeting starts at another time than when the person clicked.
	// Its errors are a reminder's (scheduler.Notifier).
	NotifySnooze(ctx context.Context, r meetingbot.Reminder, of meetingbot.Snooze, moved bool) (meetingbot.Receipt, error)
	// Delivered reports whether a message with r.Key reached r's
	// destination after r.TriggerAt: meetingbot.ErrUnknown when it can
	// never tell, another error when it cannot tell now.
	Delivered(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, bool, error)
}

// Ledger is the reminders' ledger, whose claims guard each snooze's DM as
// they guard a reminder: claimed, sent and recorded under the timer's
// key and the person's pseudo-subscription (meetingbot.SnoozeSubscription).
type Ledger interface {
	Entries(ctx context.Context, subscription string, keys []string) (map[string]meetingbot.Entry, error)
	Claim(ctx context.Context, e meetingbot.Entry, now, leaseUntil time.Time) (meetingbot.ClaimStatus, meetingbot.Entry, error)
	Record(ctx context.Context, e meetingbot.Entry, now time.Time) error
	Release(ctx context.Context, e meetingbot.Entry, reason string) error
}

// Timers adds snoozes, and moves one whose meeting moved before it came;
// *timer.Engine provides it, and wakes itself when one falls due before
// its next wake.
type Timers interface {
	Add(ctx context.Context, t meetingbot.Timer) (meetingbot.Timer, bool, error)
	// Rekey ends old as moved to next, when old's instant is ahead and
	// nobody is firing it, and reports whether it did.
	Rekey(ctx context.Context, old, next meetingbot.Timer, reason string) (bool, error)
}

// Store lists and cancels a person's snoozes; both stores provide it.
type Store interface {
	PendingTimers(ctx context.Context, subject string) ([]meetingbot.Timer, error)
	CancelTimer(ctx context.Context, key, subject string, now time.Time) (meetingbot.Timer, bool, error)
}

// Reading returns the meetings of calendarID as the bot last read them
// (the mirror's reading, from the store), without reading the calendar;
// false when it holds no reading of it.
type Reading func(ctx context.Context, calendarID string) ([]meetingbot.Meeting, bool, error)

// Subscriptions finds a reminder's subscription by its ID: one of
// CALENDARS, or one made in Slack; false when there is none (removed
// since).
type Subscriptions func(ctx context.Context, id string) (meetingbot.Subscription, bool, error)
