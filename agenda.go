package meetingbot

import (
	"time"
)

// Agenda is one person's daily agenda: the meetings of their calendar on
// one local day, DMed to them at the time they chose ("/meetingbot agenda
// HH:MM") in their Slack time zone. Its ledger entry is keyed by the
// person and the local date (AgendaKey), so it goes out once per local
// day, DST days included.
type Agenda struct {
	// User is the Slack user ID the agenda is DMed to.
	User string
	// Calendar is the calendar read: the person's Slack profile email.
	Calendar string
	// Date is the local date, "2006-01-02", in Zone.
	Date string
	// Zone is the person's Slack time zone as read when it was planned.
	Zone *time.Location
	// At is the instant it is due: HH:MM on Date in Zone, or the first
	// instant after a spring-forward gap that swallowed HH:MM.
	At time.Time
	// Meetings are the day's meetings after the reminders' filters, in
	// start order.
	Meetings []Meeting
	// AllDay are the day's all-day events, listed apart.
	AllDay []AllDayEvent
	// Late is true when it goes out after At had passed (the bot was down
	// or stalled at HH:MM).
	Late bool
}

// Key returns the agenda's ledger key (AgendaKey).
func (a Agenda) Key() string { return AgendaKey(a.User, a.Date) }

// Subscription returns the pseudo-subscription that scopes the agenda's
// ledger entry and names its messages' metadata: ID AgendaSubscription,
// a DM to User of their own calendar.
func (a Agenda) Subscription() Subscription {
	return Subscription{ID: AgendaSubscription(a.User), Kind: KindAgenda, CalendarID: a.Calendar, Reader: a.User, Destination: a.User}
}

// AllDayEvent is an all-day event of a calendar: it has dates, not
// instants. EndDate is exclusive, as Google Calendar writes it.
type AllDayEvent struct {
	ID        string
	Title     string
	StartDate string // "2006-01-02"
	EndDate   string // "2006-01-02", the day after the last
	HTMLLink  string
	Private   bool
}

// On reports whether the event covers the local date d ("2006-01-02").
func (e AllDayEvent) On(d string) bool { return e.StartDate <= d && d < e.EndDate }

// Day is what a calendar holds in a window, for an agenda: the meetings
// that start in it, with the reminders' filters, and the all-day events
// that touch it, with the same filters but all-day.
type Day struct {
	Meetings []Meeting
	AllDay   []AllDayEvent
}

// agendaPrefix starts the keys and the pseudo-subscriptions of agendas. No
// subscription of CALENDARS can have it (an ID without "=" is an email)
// nor one made in Slack (see selfservice.SubscriptionID).
const agendaPrefix = "agenda:"

// AgendaKey returns the ledger key of user's agenda of the local date
// date ("2006-01-02"): agenda:<user>:<date>.
func AgendaKey(user, date string) string { return agendaPrefix + user + ":" + date }

// AgendaSubscription returns the pseudo-subscription ID that scopes user's
// agenda entries in the ledger: agenda:<user>.
func AgendaSubscription(user string) string { return agendaPrefix + user }

// AgendaTime returns the instant an agenda set for hh:mm is due on the
// local date y-m-d in loc, computed with time.Date in the zone (never by
// adding 24 hours to a previous day's): on a spring-forward day an hh:mm
// inside the gap is the first instant after the gap (02:30 becomes 03:00
// in America/New_York); on a fall-back day an hh:mm that happens twice is
// its first occurrence.
func AgendaTime(y int, m time.Month, d, hh, mm int, loc *time.Location) time.Time {
	// A date out of range (December 32) is normalised first, as time.Date
	// would.
	y, m, d = time.Date(y, m, d, 12, 0, 0, 0, loc).Date()
	t := time.Date(y, m, d, hh, mm, 0, 0, loc)
	want := hh*60 + mm
	got := t.Hour()*60 + t.Minute()
	start, end := t.ZoneBounds()
	if got != want || t.Day() != d {
		// hh:mm is in a gap, and time.Date read it with the offset of one
		// side: the first instant after the gap is the transition, the
		// start of t's period if t landed after the gap, its end if
		// before.
		if t.Day() != d || got > want {
			return start
		}
		return end
	}
	if start.IsZero() {
		return t
	}
	// On a fall-back day hh:mm may also be read in the period before
	// t's, which ended at start with a larger offset: that reading is the
	// earlier one.
	_, off := t.Zone()
	_, prevOff := start.Add(-time.Nanosecond).In(loc).Zone()
	if prevOff > off {
		if e := t.Add(-time.Duration(prevOff-off) * time.Second); e.Before(start) {
			return e
		}
	}
	return t
}

// Agenda ledger reason codes.
const (
	// ReasonNoMeetings: skipped, the person's day had no meetings; an
	// agenda is sent only on a day that has some.
	ReasonNoMeetings ReasonCode = "no_meetings"
	// ReasonAfterNoon: skipped, the bot was down or stalled from the
	// agenda's time until past local noon (or, for an agenda set after
	// noon, until an hour after it): a morning view that late is no use.
	ReasonAfterNoon ReasonCode = "after_noon"
	// ReasonAgendaOff: skipped, an interrupted agenda send whose person
	// turned the agenda off or moved it since; it was not found in Slack.
	ReasonAgendaOff ReasonCode = "agenda_off"
)
