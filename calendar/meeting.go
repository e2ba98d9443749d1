package calendar

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"

	"github.com/meetingbot/meetingbot"
)

// Meeting reads one instance of sub's calendar again, by the ID a read of
// Meetings gave it (a generated instance ID for an occurrence of a series),
// as it is now: a moved instance comes back with its new Start. It reads
// with events.get, as Meetings reads with events.list: the same
// credentials and impersonation, quotas, retries and explanations, and the
// same conversion.
//
// An instance that is no longer a meeting to remind of returns an error
// matching meetingbot.ErrGone (and meetingbot.ErrDeclined when its
// calendar's owner declined it): cancelled or deleted (answered with status
// "cancelled", or 404 or 410), declined by the calendar's owner, made
// all-day, or of a type that is not a meeting (out of office, focus time …).
// Google answers 404 as well for a calendar no longer shared with the
// reader; the next Meetings of the calendar tells that apart, as a
// permanent error. Any other error is as Meetings's: marked
// meetingbot.Permanent when it needs the operator, transient otherwise.
func (s *Source) Meeting(ctx context.Context, sub meetingbot.Subscription, eventID string) (meetingbot.Meeting, error) {
	if eventID == "" {
		return meetingbot.Meeting{}, fmt.Errorf("calendar %s: events.get: no event ID", sub.CalendarID)
	}
	var ev *calendar.Event
	err := s.withRetries(ctx, callEventsGet, sub.Reading(), func() error {
		svc, err := s.service(ctx, sub.Reading())
		if err != nil {
			return meetingbot.Permanent(err)
		}
		ev, err = svc.Events.Get(sub.CalendarID, eventID).Fields(itemFields).Context(ctx).Do()
		var gerr *googleapi.Error
		if errors.As(err, &gerr) && (gerr.Code == http.StatusNotFound || gerr.Code == http.StatusGone) {
			return fmt.Errorf("calendar %s: event %s: HTTP %d: %w", sub.CalendarID, eventID, gerr.Code, meetingbot.ErrGone)
		}
		return err
	})
	if err != nil {
		return meetingbot.Meeting{}, err
	}
	why, err := notMeeting(ev)
	switch {
	case err != nil:
		return meetingbot.Meeting{}, fmt.Errorf("calendar %s: event %s cannot be read: %w", sub.CalendarID, eventID, err)
	case why == whyDeclined:
		return meetingbot.Meeting{}, fmt.Errorf("calendar %s: event %s: %w", sub.CalendarID, eventID, meetingbot.ErrDeclined)
	case why != "":
		return meetingbot.Meeting{}, fmt.Errorf("calendar %s: event %s is %s: %w", sub.CalendarID, eventID, why, meetingbot.ErrGone)
	}
	m, _, err := meeting(ev)
	switch {
	case err != nil:
		return meetingbot.Meeting{}, fmt.Errorf("calendar %s: event %s cannot be read: %w", sub.CalendarID, eventID, err)
	case len(meetingbot.ForSubscription(sub, []meetingbot.Meeting{m})) == 0:
		return meetingbot.Meeting{}, fmt.Errorf("calendar %s: event %s is of type %s: %w", sub.CalendarID, eventID, outOfOffice, meetingbot.ErrGone)
	}
	return m, nil
}
