package calendar

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"

	"github.com/meetingbot/meetingbot"
)

// callEventsPatch names events.patch for Config.Observe and QuotaWait.
const callEventsPatch = "events.patch"

// maxConflicts bounds the reads and writes of one answer while other
// writers keep changing the event (412 each time).
const maxConflicts = 5

// answerFields is what an answer reads of the event: its version, what
// the person is told, and the attendees.
const answerFields = "id,etag,status,summary,start(date,dateTime),recurrence,recurringEventId,organizer(email,self)," +
	"attendees(email,displayName,self,organizer,resource,optional,responseStatus,comment,additionalGuests),attendeesOmitted"

// sendUpdates is what an answer asks Google to notify: "all", confirmed
// against Google's documentation and what others report.
//
//   - The parameter says which "Guests who should receive notifications
//     about the event update": "all", "externalOnly" (guests not on
//     Google Calendar) or "none" (Events: patch, sendUpdates). Left out,
//     Google sends nothing: "Google Calendar's implicit default when
//     sendUpdates is omitted is effectively 'none'"
//     (taylorwilsdon/google_workspace_mcp#707, whose RSVP action sends
//     "all" by default, #639), and "none" may keep the change from
//     reaching external calendars (Events: insert, sendUpdates).
//   - An answer is a reply from one attendee to the organizer (RFC 5546
//     section 3.2.3, REPLY), not an update of the event: no other guest
//     hears of it. Google Calendar's own page answers with a click on
//     Yes, No or Maybe and asks nobody about notifying ("Respond to event
//     invitations", https://support.google.com/calendar/answer/37135);
//     an organizer on Google Calendar sees the answer on the event, and
//     gets an email only with their own "event responses" notifications
//     on (the same page), while one outside Google Calendar learns it by
//     email alone ("you get an eMail from the persons Google account,
//     telling you that they replied to your invitation",
//     nextcloud/calendar#7787).
//
// So "none" would leave an organizer outside Google Calendar without the
// answer, and "externalOnly" one on Google Calendar who asked for
// response emails; "all" lets Google deliver the reply as its own page
// does. The patch changes the person's own entry alone
// (attendeesOmitted), so there is no update of the event to announce to
// the other guests.
const sendUpdates = "all"

// Respond sets the answer of a calendar's owner to the invitation eventID
// (an instance, a single event, or a series, whose answer holds for its
// occurrences) with the token of the account they connected, reading
// (meetingbot.ReadAs) naming the calendar and them: it reads the
// event, changes only their own attendee entry (self), and writes it back
// with events.patch, attendeesOmitted ("When updating an event, this can
// be used to only update the participant's response", Events resource)
// and the event's ETag as If-Match, so that no other attendee's entry is
// ever written; on 412 Precondition Failed (someone changed the event
// meanwhile) it reads again and retries. An answer already given writes
// nothing.
//
// Errors: meetingbot.ErrNotConnected (no connection in use for the
// calendar: never connected, disconnected, revoked), ErrNeedsWrite,
// ErrCannotEdit, ErrNotInvited, ErrGone (deleted or cancelled), each of
// package meetingbot and marked permanent; others (rate limits, 5xx, network,
// an event that kept changing) are transient.
func (s *Source) Respond(ctx context.Context, reading, eventID string, r meetingbot.Response) (meetingbot.Answered, error) {
	calendarID, reader := meetingbot.ParseReading(reading)
	out := meetingbot.Answered{Calendar: calendarID, Event: eventID, Response: r}
	if !r.Answer() {
		return out, fmt.Errorf("calendar %s: answer %q: not accepted, tentative or declined", calendarID, r)
	}
	if s.cfg.Accounts == nil {
		return out, meetingbot.Permanent(meetingbot.ErrNotConnected)
	}
	if _, _, err := s.cfg.Accounts.Account(ctx, reader, calendarID); reader == "" || err != nil {
		if reader == "" {
			err = meetingbot.ErrNotConnected
		}
		if errors.Is(err, meetingbot.ErrNotConnected) {
			return out, meetingbot.Permanent(fmt.Errorf("calendar %s: answer: %w", calendarID, err))
		}
		return out, err
	}
	for range maxConflicts {
		ev, err := s.readForAnswer(ctx, reading, eventID)
		if err != nil {
			return out, err
		}
		out.Title, out.Series = ev.Summary, len(ev.Recurrence) > 0
		if ev.Start != nil {
			out.Start, _ = time.Parse(time.RFC3339, ev.Start.DateTime)
		}
		self := selfAttendee(ev)
		if self == nil || (ev.Organizer != nil && ev.Organizer.Self) || self.Organizer {
			return out, meetingbot.Permanent(fmt.Errorf("calendar %s: event %s: %w", calendarID, eventID, meetingbot.ErrNotInvited))
		}
		out.Was = meetingbot.Response(self.ResponseStatus)
		if out.Was == r {
			return out, nil
		}
		entry := *self
		entry.ResponseStatus = string(r)
		entry.Self = false // read-only: the server says it of each copy
		patch := &calendar.Event{AttendeesOmitted: true, Attendees: []*calendar.EventAttendee{&entry}}
		err = s.withPatchQuota(ctx, reading, func() error {
			svc, err := s.service(ctx, reading)
			if err != nil {
				return meetingbot.Permanent(err)
			}
			call := svc.Events.Patch(calendarID, eventID, patch).SendUpdates(sendUpdates).Fields("id,etag").Context(ctx)
			call.Header().Set("If-Match", ev.Etag)
			_, err = call.Do()
			return gone(calendarID, eventID, err)
		})
		var gerr *googleapi.Error
		if errors.As(err, &gerr) && gerr.Code == http.StatusPreconditionFailed {
			s.log.Debug("an answer's event changed meanwhile; reading it again", "calendar", calendarID, "event", eventID)
			continue
		}
		if err != nil {
			return out, answerError(calendarID, eventID, err)
		}
		return out, nil
	}
	return out, fmt.Errorf("calendar %s: event %s: changed by others on each of %d tries; try again", calendarID, eventID, maxConflicts)
}

// readForAnswer reads what an answer needs of the event: a deleted or
// cancelled one is meetingbot.ErrGone.
func (s *Source) readForAnswer(ctx context.Context, reading, eventID string) (*calendar.Event, error) {
	calendarID, _ := meetingbot.ParseReading(reading)
	var ev *calendar.Event
	err := s.withRetries(ctx, callEventsGet, reading, func() error {
		svc, err := s.service(ctx, reading)
		if err != nil {
			return meetingbot.Permanent(err)
		}
		ev, err = svc.Events.Get(calendarID, eventID).Fields(answerFields).Context(ctx).Do()
		return gone(calendarID, eventID, err)
	})
	switch {
	case err != nil:
		return nil, answerError(calendarID, eventID, err)
	case ev.Status == "cancelled":
		return nil, meetingbot.Permanent(fmt.Errorf("calendar %s: event %s was cancelled: %w", calendarID, eventID, meetingbot.ErrGone))
	}
	return ev, nil
}

// withPatchQuota runs a write under withRetries, after two more places in
// the quotas than a read: "each patch request consumes three quota units"
// (Events: patch).
func (s *Source) withPatchQuota(ctx context.Context, reading string, try func() error) error {
	calendarID, _ := meetingbot.ParseReading(reading)
	for range 2 {
		if _, err := s.quota.wait(ctx, s.reader(ctx, reading)); err != nil {
			return fmt.Errorf("calendar %s: %s: waiting for the quota: %w", calendarID, callEventsPatch, err)
		}
	}
	return s.withRetries(ctx, callEventsPatch, reading, try)
}

// gone turns 404 and 410 into meetingbot.ErrGone.
func gone(calendarID, eventID string, err error) error {
	var gerr *googleapi.Error
	if errors.As(err, &gerr) && (gerr.Code == http.StatusNotFound || gerr.Code == http.StatusGone) {
		return fmt.Errorf("calendar %s: event %s: HTTP %d: %w", calendarID, eventID, gerr.Code, meetingbot.ErrGone)
	}
	return err
}

// answerError says which of Respond's errors err is.
func answerError(calendarID, eventID string, err error) error {
	var gerr *googleapi.Error
	switch {
	case errors.Is(err, meetingbot.ErrGone):
		return meetingbot.Permanent(err)
	case errors.As(err, &gerr) && gerr.Code == http.StatusForbidden &&
		(hasReason(gerr, "insufficientPermissions") || strings.Contains(gerr.Message, "insufficient authentication scopes")):
		return meetingbot.Permanent(fmt.Errorf("calendar %s: event %s: %w: %w", calendarID, eventID, meetingbot.ErrNeedsWrite, concise(err)))
	case errors.As(err, &gerr) && gerr.Code == http.StatusForbidden && !hasReason(gerr, "rateLimitExceeded") && !hasReason(gerr, "userRateLimitExceeded"):
		return meetingbot.Permanent(fmt.Errorf("calendar %s: event %s: %w: %w", calendarID, eventID, meetingbot.ErrCannotEdit, concise(err)))
	}
	return err
}

// selfAttendee returns the attendee entry of the calendar's owner.
func selfAttendee(ev *calendar.Event) *calendar.EventAttendee {
	for _, a := range ev.Attendees {
		if a != nil && a.Self {
			return a
		}
	}
	return nil
}
