package demo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2/google"
	gcal "google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// demoEndsAfter is how long after its last reminder is due the demo stops:
// long enough for that reminder to be sent and recorded.
const demoEndsAfter = 5 * time.Second

// demoLedger reads what the bot recorded of the reminders due in
// [from, to), from the ledger at path once the bot has stopped.
func demoLedger(ctx context.Context, path string, from, to time.Time) ([]meetingbot.Entry, error) {
	s, err := sqlite.OpenExisting(ctx, path)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Range(ctx, "", from, to)
}

// demoOutcome is what the demo says of a meeting the ledger has no
// reminder of at its time, read from the calendar as it is when the demo
// stops.
type demoOutcome struct {
	title, why string
}

// demoMeeting is a meeting the script puts in a calendar, with the start
// it was first given.
type demoMeeting struct {
	cal, id, title string
	start          time.Time
}

// demoCalendar reads each meeting back from the Calendar emulator, as the
// bot reads it (events.get, which answers a deleted event as cancelled),
// when the demo stops: by event ID, those the calendar has (one the script
// had not created yet is absent).
func demoCalendar(ctx context.Context, cal *calendartest.Server, meetings []demoMeeting) (map[string]*gcal.Event, error) {
	conf, err := google.JWTConfigFromJSON(cal.ServiceAccountJSON(), gcal.CalendarEventsReadonlyScope)
	if err != nil {
		return nil, err
	}
	svc, err := gcal.NewService(ctx, option.WithHTTPClient(conf.Client(ctx)), option.WithEndpoint(cal.Endpoint()))
	if err != nil {
		return nil, err
	}
	now := map[string]*gcal.Event{}
	for _, m := range meetings {
		ev, err := svc.Events.Get(m.cal, m.id).Context(ctx).Do()
		var ge *googleapi.Error
		switch {
		case errors.As(err, &ge) && ge.Code == http.StatusNotFound:
			continue
		case err != nil:
			return nil, fmt.Errorf("%s in %s: %w", m.id, m.cal, err)
		}
		now[m.id] = ev
	}
	return now, nil
}

// withoutReminder says, for each meeting the ledger has no reminder of at
// its first start, why, from the calendar as it is at stop: cancelled,
// moved (and whether its new time was reminded), or not due yet.
func withoutReminder(p *demoPrinter, entries []meetingbot.Entry, meetings []demoMeeting, now map[string]*gcal.Event, stop time.Time) []demoOutcome {
	var out []demoOutcome
	first := demoFirstOffset()
	for _, m := range meetings {
		ev := now[m.id]
		if ev == nil {
			continue
		}
		start, _ := time.Parse(time.RFC3339, ev.Start.DateTime)
		at := func(t time.Time) bool {
			return slices.ContainsFunc(entries, func(e meetingbot.Entry) bool { return e.EventID == m.id && e.Start.Equal(t) })
		}
		notDue := ev.Status != "cancelled" && !at(start) && start.Add(-first).After(stop)
		switch {
		case ev.Status == "cancelled" && !at(m.start):
			out = append(out, demoOutcome{m.title, "cancelled before its reminder time (the calendar has it cancelled)"})
		case !start.Equal(m.start) && !at(m.start):
			why := "moved to " + p.clock(start) + " before its reminders were due"
			switch {
			case at(start):
				why += ": they went out for the new time only"
			case notDue:
				why += ": its first reminder for the new time is not due yet, at " + p.clock(start.Add(-first))
			}
			out = append(out, demoOutcome{m.title + " at " + p.clock(m.start), why})
		case notDue:
			out = append(out, demoOutcome{m.title + " at " + p.clock(start), "not due yet when the demo stopped: its first reminder is due at " + p.clock(start.Add(-first))})
		}
	}
	return out
}

// demoFirstOffset is the demo's longest offset: a meeting's first
// reminder is due that long before it starts.
func demoFirstOffset() time.Duration {
	var longest time.Duration
	for o := range strings.SplitSeq(demoOffsets, ",") {
		if d, err := time.ParseDuration(o); err == nil && d > longest {
			longest = d
		}
	}
	return longest
}

// summary prints what the bot did, from the ledger: each reminder sent
// (and whether late or edited since), each one skipped or failed and why,
// then the meetings that were never due.
func (p *demoPrinter) summary(entries []meetingbot.Entry, titles map[string]string, none []demoOutcome, early bool) {
	var sent, late, edited, other int
	var b strings.Builder
	for _, e := range entries {
		title := titles[e.EventID]
		if title == "" {
			title = e.EventID
		}
		what := fmt.Sprintf("%s  %-13s  %s, %s", p.clock(e.TriggerAt), demoDestination(e.Channel, e.Subscription), title, demoOffset(e.Offset))
		switch e.Outcome {
		case meetingbot.Sent:
			sent++
			line := "  sent     " + what
			if e.Late {
				late++
				line += " (late: found due after its reminder time)"
			}
			if e.Edit.Count > 0 {
				edited++
				line += "; edited since: " + demoEdit(p, e.Edit)
			}
			b.WriteString(line + "\n")
		case meetingbot.Skipped:
			other++
			fmt.Fprintf(&b, "  skipped  %s: %s\n", what, e.Reason)
		case meetingbot.Failed:
			other++
			fmt.Fprintf(&b, "  failed   %s: %s\n", what, e.Reason)
		default:
			other++
			fmt.Fprintf(&b, "  %-8s %s\n", e.Outcome, what)
		}
	}
	for _, n := range none {
		fmt.Fprintf(&b, "  none     %s: %s\n", n.title, n.why)
	}
	head := "That was every demo meeting."
	if early {
		head = "Stopped before the last demo meeting."
	}
	p.printf("%s What the bot did (from its ledger; times are when each reminder was due; \"none\" lines are the meetings without one, as the calendar has them now): %d reminders sent, %d of them late, %d edited since, %d skipped or failed.\n%s\n",
		head, sent, late, edited, other, b.String())
}

// demoDestination names where a reminder went, as the demo prints it.
func demoDestination(channel, subscription string) string {
	switch {
	case channel == demoChannelID:
		return demoChannel
	case channel == demoDM(demoBobSlackID):
		return "DM to @bob"
	case channel != "":
		return "DM to @alice"
	case strings.Contains(subscription, "="):
		return demoChannel
	}
	return "DM"
}

// demoOffset says an offset as the reminders do.
func demoOffset(d time.Duration) string {
	if d == 0 {
		return "at the start"
	}
	return meetingbot.FormatOffset(d) + " before"
}

// demoEdit says what an edited reminder's message says now.
func demoEdit(p *demoPrinter, e meetingbot.Edit) string {
	switch e.Kind {
	case meetingbot.EditMoved:
		return "moved to " + p.clock(e.MovedTo)
	case meetingbot.EditCancelled:
		return "cancelled"
	case meetingbot.EditDeclined:
		return "declined"
	case meetingbot.EditRestored:
		return "moved back"
	}
	return string(e.Kind)
}
