package meetingbot

import "time"

// Kind is what a subscription, and each ledger entry of it, is for: set
// when the subscription is made, it chooses the engine that plans its work
// and the notifier that delivers it. The zero value is KindReminder.
type Kind string

// Kinds of subscriptions. Their IDs keep the prefixes they were stored
// under (status:, snooze:, invite:, agenda:, feed:, chagenda:), but
// nothing branches on an ID: it reads the Kind.
const (
	// KindReminder: reminders before meetings, in a channel or a DM: the
	// subscriptions of CALENDARS and those made with /meetingbot. The
	// scheduler sweeps them.
	KindReminder Kind = ""
	// KindStatus: a person's Slack status during their meetings
	// (StatusSubscription). The scheduler sweeps them too, and the status
	// setter delivers them.
	KindStatus Kind = "status"
	// KindSnooze: "Remind me at start" and "In 5 min" (SnoozeSubscription),
	// durable timers the timer engine fires.
	KindSnooze Kind = "snooze"
	// KindInvite: notices of new invitations (InviteSubscription).
	KindInvite Kind = "invite"
	// KindAgenda: a person's daily agenda (AgendaSubscription).
	KindAgenda Kind = "agenda"
	// KindFeed: a channel's notices of its calendar's changes
	// (FeedSubscription).
	KindFeed Kind = "feed"
	// KindChannelAgenda: a channel's daily and weekly agendas
	// (ChannelAgendaSubscription).
	KindChannelAgenda Kind = "channel_agenda"
)

// StatusSubscription returns the ID of user's status subscription:
// status:<user>.
func StatusSubscription(user string) string { return "status:" + user }

// StatusDestination returns the destination of user's status subscription,
// and the channel its ledger entries record: status:<user>.
func StatusDestination(user string) string { return "status:" + user }

// Subscription is one calendar read for one Slack destination with a set of
// reminder offsets, e.g. alice@example.com -> DM to Alice at 10m and 1m.
type Subscription struct {
	// ID names the subscription in the ledger, logs and metrics. It scopes
	// keys and cursors, so it must stay the same across restarts.
	ID string
	// Kind is what the subscription is for; the zero value, KindReminder,
	// is reminders.
	Kind Kind
	// CalendarID is the Google Calendar to read, usually the owner's email.
	CalendarID string
	// Destination is where reminders go, as configured: a channel ID (C…,
	// G…), "#name", a user ID (U…, W…) or an email. Empty means a DM to the
	// Slack user whose email is CalendarID.
	Destination string
	// Offsets are how long before a meeting's start to remind; 0 means
	// "starting now".
	Offsets []time.Duration
	// Muted lists the recurring series (Meeting.Series) of the calendar
	// that get no reminder in this subscription.
	Muted []string
	// FromSlack marks a subscription made from Slack (see
	// SlackSubscription): people may mute its series there, so its
	// reminders of recurring meetings carry a "Mute this series" button
	// (ActionMuteSeries). The operator's subscriptions (CALENDARS) do not.
	FromSlack bool
	// OutOfOffice asks for the calendar's out-of-office events too
	// (Meeting.OutOfOffice): the status subscription of a person who
	// turned it on, whose status says "Out of office" during them. No
	// reminder subscription asks for them.
	OutOfOffice bool
}

// Mutes reports whether m belongs to a series muted in s.
func (s Subscription) Mutes(m Meeting) bool {
	if m.Series == "" {
		return false
	}
	for _, series := range s.Muted {
		if series == m.Series {
			return true
		}
	}
	return false
}

// MaxOffset returns the largest offset of the subscription.
func (s Subscription) MaxOffset() time.Duration {
	var m time.Duration
	for _, o := range s.Offsets {
		m = max(m, o)
	}
	return m
}

// MinOffset returns the smallest offset of the subscription.
func (s Subscription) MinOffset() time.Duration {
	if len(s.Offsets) == 0 {
		return 0
	}
	m := s.Offsets[0]
	for _, o := range s.Offsets[1:] {
		m = min(m, o)
	}
	return m
}
