package meetingbot

import (
	"errors"
	"fmt"
	"time"
)

// People who connected their Google account answer invitations from Slack
// (docs/design.md, "Reminder actions"): a DM reminder of a meeting they were
// invited to carries Going / Maybe / No, and with invitation notices on
// ("/meetingbot invites on") a new invitation gets a DM of its own with
// the same buttons. A click sets the person's own responseStatus on the
// event and nothing else. The buttons and what they carry are Slack's
// side (package notify/action); package rsvp answers and notices in these
// words.

// Response is an attendee's answer to an invitation, as Google Calendar's
// attendees[].responseStatus holds it.
type Response string

// Responses (Calendar API, Events resource, attendees[].responseStatus).
const (
	// ResponseNone: the meeting's calendar owner is not an invited
	// attendee of it (they organise it, or it has no guests).
	ResponseNone Response = ""
	// ResponseNeedsAction: invited, not answered yet.
	ResponseNeedsAction Response = "needsAction"
	// ResponseAccepted is Going, ResponseTentative Maybe, ResponseDeclined No.
	ResponseAccepted  Response = "accepted"
	ResponseTentative Response = "tentative"
	ResponseDeclined  Response = "declined"
)

// Answer reports whether r is an answer a person may give: accepted,
// tentative or declined.
func (r Response) Answer() bool {
	return r == ResponseAccepted || r == ResponseTentative || r == ResponseDeclined
}

// Word is how a person reads r: "Going", "Maybe", "No", or "Not answered".
func (r Response) Word() string {
	switch r {
	case ResponseAccepted:
		return "Going"
	case ResponseTentative:
		return "Maybe"
	case ResponseDeclined:
		return "No"
	}
	return "Not answered"
}

// ScopeCalendarEvents is the Google scope answering an invitation needs:
// events.patch accepts https://www.googleapis.com/auth/calendar or
// .../calendar.events (Calendar API, Events: patch, "Authorization"), and
// calendar.events ("View and edit events on all your calendars") is the
// narrower. It is asked for only from people who answer from Slack or
// turn invitation notices on (incremental authorization); everyone else
// keeps a read-only grant.
const ScopeCalendarEvents = "https://www.googleapis.com/auth/calendar.events"

// CanAnswer reports whether a connection's scopes let it answer
// invitations.
func (c Connection) CanAnswer() bool {
	for _, s := range c.Scopes {
		if s == ScopeCalendarEvents || s == "https://www.googleapis.com/auth/calendar" {
			return true
		}
	}
	return false
}

// Errors of an answer the person is told about; each is permanent.
var (
	// ErrNeedsWrite: the person's grant does not let the bot change their
	// events (403 insufficientPermissions): they allow it, once, through
	// a link that asks for ScopeCalendarEvents.
	ErrNeedsWrite = errors.New("the Google grant does not allow changing events")
	// ErrCannotEdit: Google refuses the write for the calendar or the
	// event (403 requiredAccessLevel, forbiddenForNonOrganizer): a
	// calendar the person may only read.
	ErrCannotEdit = errors.New("Google refuses changes to this event on this calendar")
	// ErrNotInvited: the calendar's owner is not an invited attendee of
	// the event (they organise it, or are not on its guest list).
	ErrNotInvited = errors.New("the calendar's owner is not an invited guest of the event")
	// ErrNotYourCalendar: the control names a calendar that is not the
	// clicker's own connected account: a person answers only for
	// themselves, whoever forwarded them the message.
	ErrNotYourCalendar = errors.New("the invitation is on another calendar than the clicker's own connected account")
	// ErrConnectionBroken: the person connected their Google account, and
	// Google no longer honours the grant (revoked, expired): they connect
	// again. It matches ErrNotConnected too.
	ErrConnectionBroken = fmt.Errorf("the Google connection stopped: %w", ErrNotConnected)
)

// Answered is what a write of a person's answer left on the event.
type Answered struct {
	// Calendar and Event name the event answered.
	Calendar, Event string
	// Title is the event's summary, unescaped; Start its start (zero for
	// an all-day event).
	Title string
	Start time.Time
	// Was is the answer before, Response the answer now.
	Was, Response Response
	// Series is true when the event is a recurring series: the answer
	// holds for its occurrences.
	Series bool
}

// Invitation notices, each a ledger entry of the person's
// pseudo-subscription (InviteSubscription) keyed by the event
// (InviteKey): claimed, sent and recorded like a reminder, so that a
// notice goes out once through restarts and replicas.

// invitePrefix starts the keys and the pseudo-subscriptions of notices.
// No subscription of CALENDARS (an email, or email=destination) nor one
// made in Slack can have it.
const invitePrefix = "invite:"

// InviteKey returns the ledger key of user's notice of the invitation to
// eventID (a single event's ID, or a series' for all its occurrences):
// invite:<user>:<eventId>.
func InviteKey(user, eventID string) string { return invitePrefix + user + ":" + eventID }

// InviteSubscription returns the pseudo-subscription that scopes user's
// notices in the ledger and names their messages' metadata: invite:<user>.
func InviteSubscription(user string) string { return invitePrefix + user }

// InviteSettings say whether one person gets invitation notices.
type InviteSettings struct {
	UserID string
	On     bool
	// Since is when they were last turned on: an invitation already on
	// the calendar then (last changed before) gets no notice.
	Since     time.Time
	UpdatedAt time.Time
}

// Invitation is one notice of a new invitation: a DM to the person
// invited, with the answer buttons (package notify renders it).
type Invitation struct {
	// Key is the notice's ledger key (InviteKey), User the Slack user
	// invited and DMed, Calendar their connected account's calendar.
	Key, User, Calendar string
	// Event is the event answered: a single event's ID, or the recurring
	// event's for a series, whose answer holds for every occurrence.
	Event string
	// Meeting is the invitation's meeting: for a series, its next
	// occurrence.
	Meeting Meeting
	// Series is true when the invitation is to a recurring series.
	Series bool
	// At is when the notice was first due: where a look in Slack for it
	// starts.
	At time.Time
}

// Subscription is the pseudo-subscription of inv's notice: scoped by
// InviteSubscription, reading the person's calendar, sent to them.
func (inv Invitation) Subscription() Subscription {
	return Subscription{ID: InviteSubscription(inv.User), Kind: KindInvite, CalendarID: inv.Calendar, Reader: inv.User, Destination: inv.User}
}

// Reminder is the notice as the ledger and Slack's history know it: its
// key, its pseudo-subscription, its meeting and when it was due.
func (inv Invitation) Reminder() Reminder {
	return Reminder{Key: inv.Key, Subscription: inv.Subscription(), Meeting: inv.Meeting, TriggerAt: inv.At}
}

// InviteDigestAt is how many new invitations found at once make one
// digest rather than a DM each: a mailing list's 40 events are one
// message, with an answer menu per line.
const InviteDigestAt = 5

// Reason codes of notices.
const (
	// ReasonInvitedBefore: skipped, the invitation was on the calendar,
	// unchanged, before the person turned notices on.
	ReasonInvitedBefore ReasonCode = "invited_before"
	// ReasonInvitesOff: skipped, an interrupted notice whose person turned
	// notices off since; it was not found in Slack.
	ReasonInvitesOff ReasonCode = "invites_off"
)
