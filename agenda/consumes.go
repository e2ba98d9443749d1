package agenda

import (
	"context"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Settings lists the people with a daily agenda; *sqlite.Store and
// *postgres.Store provide it.
type Settings interface {
	// SlackAgendas returns the settings of every user whose Agenda is set.
	SlackAgendas(ctx context.Context) ([]meetingbot.SlackSettings, error)
	// SlackSettingsOf returns one user's settings, read again just before
	// their agenda goes out.
	SlackSettingsOf(ctx context.Context, userID string) (meetingbot.SlackSettings, bool, error)
}

// Person is what Slack says of a user now.
type Person struct {
	// Email is the profile email: the calendar the agenda reads.
	Email string
	// TZ is the IANA zone of the user's Slack profile.
	TZ string
}

// People reads Slack profiles (users.info). The caller may cache them
// for a few minutes: a changed zone is then seen at the next plan after.
type People interface {
	Person(ctx context.Context, userID string) (Person, error)
}

// Calendar reads the day of a person's calendar.
type Calendar interface {
	// Day returns the meetings that start in (from, to], with the
	// reminders' filters, and the all-day events that touch the window.
	// An error that reports meetingbot.IsPermanent needs someone to act
	// (the calendar not shared); any other is retried on the next pass.
	Day(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) (meetingbot.Day, error)
}

// Notifier DMs agendas.
type Notifier interface {
	// NotifyAgenda DMs a to a.User. Its errors are a reminder's: a
	// permanent one (meetingbot.IsPermanent) is recorded as failed for the
	// day; one matching meetingbot.ErrUnconfirmed (Slack may hold the
	// message) is looked up with Delivered before any resend; any other
	// is retried on the next pass.
	NotifyAgenda(ctx context.Context, a meetingbot.Agenda) (meetingbot.Receipt, error)
	// Delivered reports whether a message with r.Key (an agenda's key, in
	// the DM of r.Subscription.Destination, posted after r.TriggerAt)
	// reached Slack: meetingbot.ErrUnknown when it can never tell, another
	// error when it cannot tell now.
	Delivered(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, bool, error)
}

// Ledger is the reminders' ledger (scheduler.Ledger's contract), of which
// the agenda uses the claims: an agenda is claimed, sent and recorded
// exactly like a reminder, under its own key (meetingbot.AgendaKey) and
// pseudo-subscription (meetingbot.AgendaSubscription).
type Ledger interface {
	Entries(ctx context.Context, subscription string, keys []string) (map[string]meetingbot.Entry, error)
	Orphans(ctx context.Context, subscription string, now time.Time) ([]meetingbot.Entry, error)
	Claim(ctx context.Context, e meetingbot.Entry, now, leaseUntil time.Time) (meetingbot.ClaimStatus, meetingbot.Entry, error)
	Renew(ctx context.Context, e meetingbot.Entry, leaseUntil time.Time) error
	Record(ctx context.Context, e meetingbot.Entry, now time.Time) error
	Release(ctx context.Context, e meetingbot.Entry, reason string) error
}

// Observer is told each outcome recorded, for metrics. It is called from
// several goroutines at once.
type Observer interface {
	RecordedAgenda(e meetingbot.Entry)
}
