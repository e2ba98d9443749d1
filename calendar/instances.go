package calendar

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"

	"github.com/meetingbot/meetingbot"
)

// callEventsInstances names events.instances in Observe and QuotaWait.
const callEventsInstances = "events.instances"

// Instances reads the instances of one recurring event of calendarID,
// recurringEventID, that are meetings starting in the window, with
// events.instances ("Returns instances of the specified recurring event")
// bounded by the window (timeMin, timeMax) and following every page: what
// the calendar holds of the series there now, whatever a sync said of it.
// Deleted instances are not asked for (showDeleted is false by default):
// the answer is the series' live instances, converted and filtered as
// Meetings does.
//
// A recurring event the calendar no longer has returns an error matching
// meetingbot.ErrGone (404, or 410 for one deleted); a deleted one Google
// still keeps answers with its instances cancelled, which are left out, so
// it comes back empty. Google answers 404 as well for a calendar no longer
// shared with the reader; the next sync tells that apart, as a permanent
// error. A 404 without Google's error body, from a server at
// GOOGLE_API_ENDPOINT that does not serve events.instances, returns an
// error matching errors.ErrUnsupported. Any other error is as
// Meetings's.
func (s *Source) Instances(ctx context.Context, reading, recurringEventID string, w Window) ([]meetingbot.Meeting, error) {
	calendarID, _ := meetingbot.ParseReading(reading)
	if !w.Horizon.After(w.From) {
		return nil, fmt.Errorf("calendar %s: events.instances: empty window (%v, %v]", calendarID, w.From, w.Horizon)
	}
	timeMin := w.From.UTC().Truncate(time.Second).Format(time.RFC3339)
	timeMax := w.Horizon.UTC().Truncate(time.Second).Add(time.Second).Format(time.RFC3339)
	var out []meetingbot.Meeting
	pageToken := ""
	for range maxPages {
		var page *calendar.Events
		err := s.withRetries(ctx, callEventsInstances, reading, func() error {
			svc, err := s.service(ctx, reading)
			if err != nil {
				return meetingbot.Permanent(err)
			}
			call := svc.Events.Instances(calendarID, recurringEventID).
				TimeMin(timeMin).
				TimeMax(timeMax).
				MaxResults(2500).
				Fields(eventFields).
				Context(ctx)
			if pageToken != "" {
				call.PageToken(pageToken)
			}
			page, err = call.Do()
			var gerr *googleapi.Error
			if errors.As(err, &gerr) && (gerr.Code == http.StatusNotFound || gerr.Code == http.StatusGone) {
				if len(gerr.Errors) == 0 && gerr.Message == "" {
					// Google answers a recurring event it lacks with its
					// error JSON (reason notFound or deleted); a 404
					// without it comes from a server that does not serve
					// the method at all (a proxy or an emulator at
					// GOOGLE_API_ENDPOINT), and says nothing of the series.
					return meetingbot.Permanent(fmt.Errorf("calendar %s: events.instances of %s: HTTP %d without Google's error body: %w", calendarID, recurringEventID, gerr.Code, errors.ErrUnsupported))
				}
				return fmt.Errorf("calendar %s: recurring event %s: HTTP %d: %w", calendarID, recurringEventID, gerr.Code, meetingbot.ErrGone)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		useDefaults(page.Items, page.DefaultReminders)
		out = appendMeetings(out, page.Items, w.From, w.Horizon, calendarID, s.log)
		if page.NextPageToken == "" {
			sortMeetings(out)
			return out, nil
		}
		pageToken = page.NextPageToken
	}
	return nil, fmt.Errorf("calendar %s: events.instances: more than %d pages", calendarID, maxPages)
}
