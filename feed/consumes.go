package feed

import (
	"context"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Source reads a followed calendar: the mirror, which syncs it when its
// last reading is old (Meetings), and reads one event from the calendar
// itself (Meeting) to tell an event cancelled from one moved out of the
// window read.
type Source interface {
	Meetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error)
	// Meeting returns the event as it is now; an error matching
	// meetingbot.ErrGone when it is cancelled, deleted or declined.
	Meeting(ctx context.Context, sub meetingbot.Subscription, eventID string) (meetingbot.Meeting, error)
}

// Subscriptions lists the channel subscriptions that follow their
// calendar's changes now (Following.ChangesSince set), as their
// subscriptions (the channel is the Destination) with when they began.
type Subscriptions func(ctx context.Context) ([]Followed, error)

// Followed is one channel subscription that follows its calendar's
// changes.
type Followed struct {
	Subscription meetingbot.Subscription
	// Since is when it began to follow them.
	Since time.Time
}

// Seen is what each channel was last told of its calendar's events; both
// stores provide it.
type Seen interface {
	FeedSeen(ctx context.Context, sub string) (map[string]meetingbot.Meeting, time.Time, error)
	PutFeedSeen(ctx context.Context, sub string, primed time.Time, put []meetingbot.Meeting, drop []string) error
	ForgetFeed(ctx context.Context, sub string) error
	// FeedPending, PutFeedPending and DropFeedPending keep the notices
	// being posted, whose outcome the next pass settles first.
	FeedPending(ctx context.Context, sub string) (map[string]meetingbot.FeedPending, error)
	PutFeedPending(ctx context.Context, sub string, ps []meetingbot.FeedPending) error
	DropFeedPending(ctx context.Context, sub string, events []string) error
}

// Notifier posts notices in their channel and finds them again;
// *notify.Slack provides it.
type Notifier interface {
	// NotifyChange posts one notice; NotifyChanges several of one channel
	// as one digest. Their errors are a reminder's: permanent
	// (meetingbot.IsPermanent), unconfirmed (meetingbot.ErrUnconfirmed:
	// Slack may hold the message), or transient.
	NotifyChange(ctx context.Context, n meetingbot.Notice) (meetingbot.Receipt, error)
	NotifyChanges(ctx context.Context, ns []meetingbot.Notice) (meetingbot.Receipt, error)
	// Delivered reports whether a message with r.Key reached r's
	// destination after r.TriggerAt: meetingbot.ErrUnknown when it can
	// never tell, another error when it cannot tell now.
	Delivered(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, bool, error)
}

// Ledger is the reminders' ledger, whose claims guard each notice as they
// guard a reminder, under its key (meetingbot.FeedKey) and the channel
// subscription's pseudo-subscription (meetingbot.FeedSubscription).
type Ledger interface {
	Entries(ctx context.Context, subscription string, keys []string) (map[string]meetingbot.Entry, error)
	Claim(ctx context.Context, e meetingbot.Entry, now, leaseUntil time.Time) (meetingbot.ClaimStatus, meetingbot.Entry, error)
	Record(ctx context.Context, e meetingbot.Entry, now time.Time) error
	Release(ctx context.Context, e meetingbot.Entry, reason string) error
}
