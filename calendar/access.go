package calendar

import (
	"context"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Access roles of a calendar as events.list answers them (the accessRole
// of an Events resource): FreeBusyReader sees when the calendar is busy and
// nothing else; the others see every event's details.
const (
	FreeBusyReader = "freeBusyReader"
	Reader         = "reader"
	Writer         = "writer"
	Owner          = "owner"
)

// Access reads a calendar the way a sweep does, for one event from now on,
// as reading (meetingbot.ReadAs) says, and returns the access role the
// answer gives the reader.
// A calendar the bot may read as FreeBusyReader is readable, but its
// reminders have no title, link or join button: BusyOnlyFix says what to
// change. On an error the operator must put right (marked
// meetingbot.Permanent: not shared, delegation or credentials refused, the
// API not enabled) fix says what to do, as the error does; on one that may
// pass (a 5xx, a rate limit, the network) fix is empty.
func (s *Source) Access(ctx context.Context, reading string) (role, fix string, err error) {
	calendarID, _ := meetingbot.ParseReading(reading)
	err = s.withRetries(ctx, callEventsList, reading, func() error {
		svc, err := s.service(ctx, reading)
		if err != nil {
			return meetingbot.Permanent(err)
		}
		page, err := svc.Events.List(calendarID).
			SingleEvents(true).
			MaxResults(1).
			TimeMin(time.Now().UTC().Format(time.RFC3339)).
			Fields("accessRole").
			Context(ctx).
			Do()
		if err == nil {
			role = page.AccessRole
		}
		return err
	})
	if err != nil && meetingbot.IsPermanent(err) {
		return "", s.fix(calendarID, err), err
	}
	return role, "", err
}

// BusyOnlyFix says how the bot gets to see the event details of
// calendarID, which it may read as FreeBusyReader only.
func (s *Source) BusyOnlyFix(calendarID string) string { return s.busyOnlyFix(calendarID) }
