package meetingbot

import "time"

// Meeting is one instance of a calendar event that deserves a reminder.
// Recurring events arrive as one Meeting per occurrence.
type Meeting struct {
	// ID is the event instance ID (e.g. "abc_20261130T010000Z").
	ID string
	// Instance, when set, names the occurrence in ledger keys instead of
	// ID, for a source whose IDs change without the meeting changing (a
	// split recurring series gets new instance IDs). See KeyID.
	Instance string
	// Series names the recurring series the meeting is an occurrence of,
	// the same before and after the series is split; empty for a single
	// event. A subscription can mute a series (Subscription.Muted).
	Series string
	// RecurringEventID is the calendar's ID of the recurring event the
	// meeting is an instance of, as it stands now (a series split off
	// another has an ID of its own, where Series stays the first's);
	// empty for a single event. A sync that reports a change of that
	// event has the mirror read its instances again.
	RecurringEventID string `json:",omitempty"`
	// Title is the event summary, unescaped; "(No title)" when empty.
	Title string
	// Start and End are instants; compare them, never their zones.
	Start, End time.Time
	// HTMLLink opens the event in Google Calendar.
	HTMLLink string
	// JoinURL is the video call link, if any.
	JoinURL string
	// Organizer is the organizer's display name or email.
	Organizer string
	// Location is the event's location as typed (a room, an address, a
	// link), unescaped; "" for none.
	Location string `json:",omitempty"`
	// Creator is the display name of who created the event (Google's
	// creator, or its organizer when the creator has none), and
	// CreatorEmail their email: who booked a room. A channel is shown
	// the name, or the Slack user the email belongs to, never the email.
	Creator      string `json:",omitempty"`
	CreatorEmail string `json:",omitempty"`
	// Updated is when the event was last modified.
	Updated time.Time
	// Private is true when the event's visibility is private or
	// confidential: only the calendar's owner may read its details. Its
	// reminders show "Private meeting" and the time only, no link of any
	// kind (join, event), except in a DM to the owner.
	Private bool
	// Response is the calendar owner's answer when they are an invited
	// attendee (in the attendee list, not the organizer); ResponseNone
	// otherwise. A declined meeting is not a Meeting at all.
	Response Response `json:",omitempty"`
	// OutOfOffice marks a timed out-of-office event (eventType
	// outOfOffice): never reminded, it is given only to the subscriptions
	// that ask for it (Subscription.OutOfOffice), a person's status
	// during it.
	OutOfOffice bool `json:",omitempty"`
	// Reminders are the event's own popup reminders as offsets before its
	// start, ascending and distinct: its reminders.overrides of method
	// popup, or its calendar's defaultReminders when it uses those.
	// Email reminders are not among them; an event without reminders has
	// none. Subscriptions that remind "as my calendar says"
	// (Subscription.OnCalendar) remind at them.
	Reminders []time.Duration `json:",omitempty"`
	// RemindersUnread is true when the read could not tell Reminders: an
	// events.get of an event that uses its calendar's defaults, which only
	// events.list carries. The last reading that could tell stands.
	RemindersUnread bool `json:",omitempty"`
	// Attendees is how many people are invited, rooms not counted (the
	// organizer is, as Google lists them), and Accepted how many of them
	// accepted. Others is how many of them are not the calendar's owner;
	// OthersHidden is true when the calendar cannot see the list
	// (attendeesOmitted), which is never alone.
	Attendees, Accepted, Others int  `json:",omitempty"`
	OthersHidden                bool `json:",omitempty"`
	// Rooms are the rooms booked (resource attendees), by name.
	Rooms []string `json:",omitempty"`
	// DialIn is the conference's phone entry, e.g. "+1 555-0100 PIN:
	// 123456"; empty when it has none.
	DialIn string `json:",omitempty"`
	// Attachments are the event's file attachments (Google Drive).
	Attachments []Attachment `json:",omitempty"`
	// Excerpt is the start of the event's description as plain text: no
	// HTML, a few lines at most. It is the event's text, untrusted: the
	// notifier makes it inert before showing it.
	Excerpt string `json:",omitempty"`
}

// Attachment is a file attached to an event, as Google lists it.
type Attachment struct {
	Title string
	URL   string
}

// Alone reports whether m has no attendee but its calendar's owner.
func (m Meeting) Alone() bool { return m.Others == 0 && !m.OthersHidden }

// ForSubscription returns the meetings of ms that sub is given: all but
// the out-of-office events, unless sub asks for those; and for a status
// (KindStatus), only the meetings the person attends: those they
// organize, accepted or answered "maybe", not an invitation they never
// answered, which Google puts on their calendar by default whoever sent
// it. Sources and the mirror hand out meetings through it.
func ForSubscription(sub Subscription, ms []Meeting) []Meeting {
	attends := sub.Kind != KindStatus
	if sub.OutOfOffice && attends {
		return ms
	}
	out := ms[:0:0]
	for _, m := range ms {
		if (sub.OutOfOffice || !m.OutOfOffice) && (attends || m.Response != ResponseNeedsAction) {
			out = append(out, m)
		}
	}
	if len(out) == len(ms) {
		return ms
	}
	return out
}

// KeyID returns what names m in its ledger keys: Instance, or ID when
// Instance is empty.
func (m Meeting) KeyID() string {
	if m.Instance != "" {
		return m.Instance
	}
	return m.ID
}

// Reminder is one due trigger: a meeting, one offset, for one subscription.
type Reminder struct {
	Key          string
	Subscription Subscription
	Meeting      Meeting
	Offset       time.Duration
	TriggerAt    time.Time
	// Late is true when the trigger's time had passed before the sweep that
	// found it (the bot was down, or the meeting was created or moved late).
	Late bool
}

// MaxDigest is the most reminders one digest message holds: reminders of
// one subscription due at one instant go out together when there are more
// than a handful, in messages of at most this many.
const MaxDigest = 45

// Receipt identifies a delivered message, so it can be found again.
type Receipt struct {
	Channel string
	TS      string
}
