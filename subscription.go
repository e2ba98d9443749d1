package meetingbot

import (
	"slices"
	"strings"
	"time"
)

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
	// Reader is the Slack user whose own connected Google account reads
	// CalendarID for this subscription: the person who set it up, when it
	// is their own calendar (their reminders, a channel they subscribed to
	// it, their status, their notices and agenda). "" reads with the bot's
	// own credentials: CALENDARS', and a subscription someone else made of
	// a person's calendar, which that person did not agree to, never read
	// with their token. See Reading.
	Reader string
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
	// OnCalendar reminds "as my calendar says" as well: at each meeting's
	// own popup reminders (Meeting.Reminders), besides Offsets.
	OnCalendar bool
	// Rules say which meetings get reminders; the zero value, all.
	Rules Rules
}

// OffsetsFor returns the offsets s reminds of m at, ascending and
// distinct: Offsets and, when OnCalendar, m's own reminders; none when
// s's rules skip m. A fixed offset and a popup of the same minutes are one
// reminder, with one key.
func (s Subscription) OffsetsFor(m Meeting) []time.Duration {
	if s.Rules.Skipped(m) != "" {
		return nil
	}
	if !s.OnCalendar || len(m.Reminders) == 0 {
		return s.Offsets
	}
	out := make([]time.Duration, 0, len(s.Offsets)+len(m.Reminders))
	out = append(out, s.Offsets...)
	for _, r := range m.Reminders {
		if r <= CalendarReach {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// FromCalendar reports whether offset o of m comes only from m's own
// reminders in s, not from s's fixed offsets.
func (s Subscription) FromCalendar(o time.Duration) bool {
	return s.OnCalendar && !slices.Contains(s.Offsets, o)
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

// MaxOffset returns the largest offset of the subscription; CalendarReach
// at least when it reminds as the calendar says.
func (s Subscription) MaxOffset() time.Duration {
	var m time.Duration
	if s.OnCalendar {
		m = CalendarReach
	}
	for _, o := range s.Offsets {
		m = max(m, o)
	}
	return m
}

// MinOffset returns the smallest offset of the subscription; 0 when it
// reminds as the calendar says (a popup may be "at the start").
func (s Subscription) MinOffset() time.Duration {
	if len(s.Offsets) == 0 || s.OnCalendar {
		return 0
	}
	m := s.Offsets[0]
	for _, o := range s.Offsets[1:] {
		m = min(m, o)
	}
	return m
}

// Reminds reports whether s sends reminders at all: at fixed offsets, or
// at its calendar's own reminders. A channel subscription that only
// follows its calendar's changes or agendas does not.
func (s Subscription) Reminds() bool { return len(s.Offsets) > 0 || s.OnCalendar }

// readingSep joins a calendar and its reader in a Reading: no calendar
// ID (an email address, or a group calendar's) holds a space.
const readingSep = " as "

// Reading names what the bot reads for s: its calendar as s.Reader reads
// it. Two subscriptions of one calendar share a reading, its mirror and
// its push channel, only when the same identity reads them: a person's
// own token never reads for a subscription they did not set up.
func (s Subscription) Reading() string { return ReadAs(s.CalendarID, s.Reader) }

// ReadAs names calendarID as reader reads it: calendarID itself for the
// bot's own credentials (reader ""), else "<calendarID> as <reader>".
func ReadAs(calendarID, reader string) string {
	if reader == "" {
		return calendarID
	}
	return calendarID + readingSep + reader
}

// ParseReading returns the calendar and the reader a Reading names.
func ParseReading(reading string) (calendarID, reader string) {
	calendarID, reader, _ = strings.Cut(reading, readingSep)
	return calendarID, reader
}
