package calendar

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	"google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot"
)

// Day returns what sub's calendar holds in (from, to], for a daily agenda:
// the meetings that start in it, as Meetings returns them, and the
// all-day events that overlap it, with the same filters (not cancelled,
// not declined, a meeting's type), sorted by start date then title.
// Whether an all-day event falls on a given local date is the caller's to
// tell (meetingbot.AllDayEvent.On): Google places all-day events in the
// calendar's zone, which need not be the reader's. Its errors are
// Meetings's.
func (s *Source) Day(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) (meetingbot.Day, error) {
	var day meetingbot.Day
	if !to.After(from) {
		return day, nil
	}
	err := s.list(ctx, sub, from, to, func(items []*calendar.Event) {
		day.Meetings = appendMeetings(day.Meetings, items, from, to, sub.CalendarID, s.log)
		day.AllDay = appendAllDay(day.AllDay, items, sub.CalendarID, s.log)
	})
	if err != nil {
		return meetingbot.Day{}, err
	}
	sortMeetings(day.Meetings)
	day.Meetings = meetingbot.ForSubscription(sub, day.Meetings)
	slices.SortStableFunc(day.AllDay, func(a, b meetingbot.AllDayEvent) int {
		return cmp.Or(strings.Compare(a.StartDate, b.StartDate), strings.Compare(a.Title, b.Title), strings.Compare(a.ID, b.ID))
	})
	return day, nil
}

// appendAllDay appends the all-day events of items that pass the
// reminders' other filters.
func appendAllDay(dst []meetingbot.AllDayEvent, items []*calendar.Event, calendarID string, log *slog.Logger) []meetingbot.AllDayEvent {
	for _, ev := range items {
		if ev == nil || ev.Start == nil || ev.End == nil || ev.Start.DateTime != "" || ev.Start.Date == "" {
			continue
		}
		if why, err := notMeeting(ev); err != nil || why != "all-day" || declined(ev) {
			continue
		}
		if !validDate(ev.Start.Date) || !validDate(ev.End.Date) {
			log.Warn("skipping unreadable all-day event", "calendar", calendarID, "event", ev.Id)
			continue
		}
		e := meetingbot.AllDayEvent{
			ID: ev.Id, Title: ev.Summary, StartDate: ev.Start.Date, EndDate: ev.End.Date, HTMLLink: ev.HtmlLink,
			Private: ev.Visibility == "private" || ev.Visibility == "confidential",
		}
		if e.Title == "" {
			e.Title = "(No title)"
		}
		if e.EndDate <= e.StartDate {
			e.EndDate = nextDate(e.StartDate)
		}
		dst = append(dst, e)
	}
	return dst
}

func validDate(d string) bool {
	_, err := time.Parse(time.DateOnly, d)
	return err == nil
}

func nextDate(d string) string {
	t, _ := time.Parse(time.DateOnly, d)
	return t.AddDate(0, 0, 1).Format(time.DateOnly)
}

// declined reports whether the calendar's owner declined ev.
func declined(ev *calendar.Event) bool {
	for _, a := range ev.Attendees {
		if a != nil && a.Self && a.ResponseStatus == "declined" {
			return true
		}
	}
	return false
}
