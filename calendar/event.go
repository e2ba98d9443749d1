package calendar

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/meetingbot/meetingbot"
	"google.golang.org/api/calendar/v3"
)

// itemFields is the fields mask of one event, for events.get: only what
// meeting reads travels.
const itemFields = "id,recurringEventId,recurrence,originalStartTime(dateTime),status,eventType,summary,start(date,dateTime),end(date,dateTime)," +
	"htmlLink,hangoutLink,conferenceData(entryPoints(entryPointType,uri,label,pin)),location,description," +
	"organizer(email,displayName,self),creator(email,displayName),attendees(self,responseStatus,resource,displayName),attendeesOmitted,updated,visibility," +
	"reminders(useDefault,overrides(method,minutes)),attachments(fileUrl,title)"

// eventFields is the fields mask of events.list: the same for each item,
// and the caller's access role, which says when the calendar shows only
// free/busy.
const eventFields = "nextPageToken,accessRole,defaultReminders(method,minutes),items(" + itemFields + ")"

// fromGmail is the type of the events Google Calendar adds from the
// calendar owner's mail: flights, trains, restaurant and hotel bookings,
// tickets. "Events automatically generated from Gmail have the 'fromGmail'
// event type", and since May 2024 they "appear with a new event Type
// 'fromGmail' instead of 'default'" and "include the email recipient as the
// organizer" (Calendar API event types guide; Workspace Updates, "The
// Calendar API now distinguishes events created from Gmail"). A timed one
// is somewhere its owner must be at a given time, as a meeting is: a flight
// is the reminder most worth having, a table booked for dinner one worth
// having too, so they are reminded like any meeting (an all-day one, a
// hotel stay, is not, as no all-day event is). But they come from the
// owner's own mail, not from a meeting anyone shared, whatever their
// visibility says: they are private (Meeting.Private), so that a channel
// subscribed to the calendar sees "Private meeting" and its time, never
// where its owner flies or dines, while the owner's own DM and agenda say
// it all.
const fromGmail = "fromGmail"

// notMeetings are the event types that never deserve a reminder, nor a
// status.
var notMeetings = map[string]bool{
	"focusTime":       true,
	"workingLocation": true,
	"birthday":        true,
}

// outOfOffice is the type of an out-of-office event ("Out of office",
// Calendar API event types guide). A timed one is a Meeting marked
// OutOfOffice: never reminded (meetingbot.ForSubscription keeps it from
// every subscription but a status one that asks for it), it sets its
// person's status to "Out of office" until its end; an all-day one is
// nothing, as every all-day event is.
const outOfOffice = "outOfOffice"

// meeting converts a listed event. ok is false for events that are not
// meetings (cancelled, all-day, declined, not a meeting type); err reports
// an event that cannot be read.
func meeting(ev *calendar.Event) (m meetingbot.Meeting, ok bool, err error) {
	if why, err := notMeeting(ev); why != "" || err != nil {
		return m, false, err
	}
	m = meetingbot.Meeting{
		ID:       ev.Id,
		Title:    ev.Summary,
		HTMLLink: ev.HtmlLink,
		JoinURL:  joinURL(ev),
		Private:  ev.Visibility == "private" || ev.Visibility == "confidential" || ev.EventType == fromGmail,
		// Out of office is said as such, never with its title.
		OutOfOffice: ev.EventType == outOfOffice,
	}
	if inst := occurrence(ev); inst != ev.Id {
		m.Instance = inst
	}
	m.Series = series(ev.RecurringEventId)
	m.RecurringEventID = ev.RecurringEventId
	if m.Title == "" {
		m.Title = "(No title)"
	}
	if m.Start, err = time.Parse(time.RFC3339, ev.Start.DateTime); err != nil {
		return m, false, fmt.Errorf("start.dateTime: %w", err)
	}
	if m.End, err = time.Parse(time.RFC3339, ev.End.DateTime); err != nil {
		return m, false, fmt.Errorf("end.dateTime: %w", err)
	}
	if m.End.Before(m.Start) {
		return m, false, errors.New("ends before it starts")
	}
	if ev.Organizer != nil {
		m.Organizer = ev.Organizer.DisplayName
		if m.Organizer == "" {
			m.Organizer = ev.Organizer.Email
		}
	}
	m.Location = ev.Location
	m.Creator, m.CreatorEmail = creator(ev)
	m.Response = response(ev)
	var told bool
	m.Reminders, told = popups(ev)
	m.RemindersUnread = !told
	guests(&m, ev)
	m.DialIn = dialIn(ev)
	m.Attachments = attachments(ev)
	m.Excerpt = excerpt(ev.Description, m.JoinURL)
	if ev.Updated != "" {
		// updated is informational: a bad one does not cost the reminder.
		m.Updated, _ = time.Parse(time.RFC3339, ev.Updated)
	}
	return m, true, nil
}

// creator returns who made ev, for a channel's notice of it ("booked by"
// on a room's calendar): the creator's display name and email, or the
// organizer's where Google gives no creator (the Events resource marks
// both read-only; the organizer is whoever owns the event, which for a
// room is the person who booked it).
func creator(ev *calendar.Event) (name, email string) {
	if ev.Creator != nil {
		name, email = ev.Creator.DisplayName, ev.Creator.Email
	}
	if ev.Organizer != nil && name == "" && (email == "" || email == ev.Organizer.Email) {
		name = ev.Organizer.DisplayName
		if email == "" {
			email = ev.Organizer.Email
		}
	}
	return name, email
}

// response returns the calendar owner's answer to ev when they are an
// invited attendee: the attendee entry with self true ("Whether this entry
// represents the calendar on which this copy of the event appears",
// Events resource) on an event they do not organise (organizer.self).
// Google lists the organizer among the attendees too, accepted.
func response(ev *calendar.Event) meetingbot.Response {
	if ev.Organizer != nil && ev.Organizer.Self {
		return meetingbot.ResponseNone
	}
	for _, a := range ev.Attendees {
		if a == nil || !a.Self || a.Organizer {
			continue
		}
		if r := meetingbot.Response(a.ResponseStatus); r.Answer() || r == meetingbot.ResponseNeedsAction {
			return r
		}
		return meetingbot.ResponseNeedsAction // no answer recorded: not answered
	}
	return meetingbot.ResponseNone
}

// whyDeclined is notMeeting's reason for an event its calendar's owner
// declined.
const whyDeclined = "declined by the calendar's owner"

// notMeeting says why ev is not a meeting ("cancelled", "all-day" …), or ""
// when it is one; err reports an event that cannot be read.
func notMeeting(ev *calendar.Event) (why string, err error) {
	switch {
	case ev.Id == "":
		return "", errors.New("missing id")
	case ev.Status == "cancelled":
		return "cancelled", nil
	case len(ev.Recurrence) > 0:
		// With singleEvents=true Google lists instances, "but not the
		// underlying recurring events themselves" (events.list), yet a
		// sync has been seen listing a master, recurrence and all
		// (phw198/OutlookGoogleCalendarSync#2124). Its start is its
		// first instance's, which has a meeting of its own.
		return "a recurring event, not one of its instances", nil
	case notMeetings[ev.EventType]:
		return "of type " + ev.EventType, nil
	case ev.EventType == outOfOffice && ev.Start != nil && ev.Start.DateTime == "":
		return "of type " + ev.EventType + ", all day", nil
	case ev.Start == nil || ev.End == nil:
		return "", errors.New("missing start or end")
	case ev.Start.DateTime == "" && ev.Start.Date != "":
		return "all-day", nil
	}
	for _, a := range ev.Attendees {
		if a != nil && a.Self && a.ResponseStatus == "declined" {
			return whyDeclined, nil
		}
	}
	return "", nil
}

// splitSuffix is what Google Calendar appends to a series' id when "this
// and following events" splits a series in two: the id of the series split
// off is the old one, "_R" and the split instant (e.g.
// "abc_R20261130T090000"). IDs that clients choose are base32hex (a-v and
// 0-9), so "_R" cannot come from them.
var splitSuffix = regexp.MustCompile(`_R[0-9]{8}(T[0-9]{6}Z?)?$`)

// occurrence names an event for ledger keys so that a split series alone
// never makes its meetings new work. An instance of a series split off
// another is named as the original series named it: the first series' id,
// "_" and the original start in UTC, which is Google's instance id form
// ("abc_20261130T090000Z"). Every other event is named by its id, so keys
// stay what they were; and a moved instance keeps its name but changes its
// start, so its key changes as a moved meeting's must.
func occurrence(ev *calendar.Event) string {
	root := series(ev.RecurringEventId)
	if root == ev.RecurringEventId || ev.OriginalStartTime == nil {
		return ev.Id
	}
	orig, err := time.Parse(time.RFC3339, ev.OriginalStartTime.DateTime)
	if err != nil {
		return ev.Id
	}
	return root + "_" + orig.UTC().Format("20060102T150405Z")
}

// series names the series of an instance whose recurringEventId is id: the
// first series' id, so that a split series stays one (and stays muted).
func series(id string) string {
	for splitSuffix.MatchString(id) {
		id = splitSuffix.ReplaceAllString(id, "")
	}
	return id
}

// appendMeetings appends the meetings of items starting in (from, to],
// logging and skipping the events it cannot read.
func appendMeetings(dst []meetingbot.Meeting, items []*calendar.Event, from, to time.Time, calendarID string, log *slog.Logger) []meetingbot.Meeting {
	for _, ev := range items {
		if ev == nil {
			continue
		}
		m, ok, err := meeting(ev)
		if err != nil {
			log.Warn("skipping unreadable event", "calendar", calendarID, "event", ev.Id, "err", err)
			continue
		}
		if ok && m.Start.After(from) && !m.Start.After(to) {
			dst = append(dst, m)
		}
	}
	return dst
}
