package scheduler

import (
	"context"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Source reads the meetings of a subscription's calendar.
type Source interface {
	// Meetings returns the meetings that start in (from, to]. An error that
	// reports Permanent() == true (see meetingbot.IsPermanent) needs an operator; any
	// other error is retried on the next tick.
	Meetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error)
}

// Notifier delivers reminders.
type Notifier interface {
	// Notify delivers one reminder and returns where it landed. A permanent
	// error (meetingbot.IsPermanent) is recorded as failed and not retried; any other
	// error is retried on the next tick.
	Notify(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, error)
	// Delivered reports whether a reminder with r.Key already reached its
	// destination; it is asked after a crash left a send unconfirmed. It
	// returns meetingbot.ErrUnknown when it cannot tell.
	Delivered(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, bool, error)
}
