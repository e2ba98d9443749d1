package rsvp

import (
	"context"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Calendar writes a person's answer with their own token;
// *calendar.Source provides it.
type Calendar interface {
	// Respond sets the answer of calendarID's owner to the invitation
	// eventID and returns what the write left. Its errors are those of
	// package meetingbot (ErrNotConnected, ErrNeedsWrite, ErrCannotEdit,
	// ErrNotInvited, ErrGone), permanent; others are transient.
	Respond(ctx context.Context, calendarID, eventID string, r meetingbot.Response) (meetingbot.Answered, error)
}

// Accounts are people's own connected accounts; *connect.Accounts
// provides them.
type Accounts interface {
	// Connection returns userID's connection to provider, and whether
	// there is one (active or broken).
	Connection(ctx context.Context, provider meetingbot.Provider, userID string) (meetingbot.Connection, bool, error)
	// LinkScopes returns a link, for userID only, that connects their
	// account asking for scopes beyond the read-only ones, granted with
	// those given before (incremental authorization).
	LinkScopes(ctx context.Context, provider meetingbot.Provider, userID string, scopes []string) (string, error)
}

// Source reads the meetings of a person's calendar: the mirror, which
// syncs it when its last reading is old.
type Source interface {
	Meetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error)
}

// Settings lists the people who turned invitation notices on; both
// stores provide it.
type Settings interface {
	// InviteSettingsOn returns the settings of everyone whose notices are
	// on.
	InviteSettingsOn(ctx context.Context) ([]meetingbot.InviteSettings, error)
	// InviteSettingsOf returns one person's settings, read again just
	// before a notice of theirs goes out.
	InviteSettingsOf(ctx context.Context, userID string) (meetingbot.InviteSettings, bool, error)
}

// Notifier DMs notices and finds them again; *notify.Slack provides it.
type Notifier interface {
	// NotifyInvite DMs the notice of one invitation; NotifyInviteDigest
	// DMs several of one person's as one message. Their errors are a
	// reminder's: permanent (meetingbot.IsPermanent), unconfirmed
	// (meetingbot.ErrUnconfirmed: Slack may hold the message), or
	// transient.
	NotifyInvite(ctx context.Context, inv meetingbot.Invitation) (meetingbot.Receipt, error)
	NotifyInviteDigest(ctx context.Context, invs []meetingbot.Invitation) (meetingbot.Receipt, error)
	// Delivered reports whether a message with r.Key reached r's
	// destination after r.TriggerAt: meetingbot.ErrUnknown when it can
	// never tell, another error when it cannot tell now.
	Delivered(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, bool, error)
}

// Ledger is the reminders' ledger, whose claims guard each notice as they
// guard a reminder: claimed, sent and recorded under its key
// (meetingbot.InviteKey) and the person's pseudo-subscription
// (meetingbot.InviteSubscription).
type Ledger interface {
	Entries(ctx context.Context, subscription string, keys []string) (map[string]meetingbot.Entry, error)
	Orphans(ctx context.Context, subscription string, now time.Time) ([]meetingbot.Entry, error)
	Claim(ctx context.Context, e meetingbot.Entry, now, leaseUntil time.Time) (meetingbot.ClaimStatus, meetingbot.Entry, error)
	Record(ctx context.Context, e meetingbot.Entry, now time.Time) error
	Release(ctx context.Context, e meetingbot.Entry, reason string) error
}
