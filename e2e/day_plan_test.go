package e2e

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

// The simulated day's people and what happens to their calendars (see
// BenchmarkDay). Each person's day is drawn from a generator of its own,
// seeded with the run's seed and the person's number, so that a person's
// day is the same whatever the number of people: calls per
// subscription-day at 1,000 and at 10,000 measure the same days.

// dayZones are where people work; each person is in one, drawn evenly.
var dayZones = []string{
	"America/Los_Angeles", "America/New_York", "America/Sao_Paulo", "Europe/London",
	"Europe/Berlin", "Asia/Kolkata", "Asia/Singapore", "Asia/Tokyo", "Australia/Sydney",
}

// Shares of the day's changes.
const (
	dayMoved      = 0.05 // of the meetings, moved during the day
	dayCancelled  = 0.02 // of the meetings, cancelled during the day
	daySoon       = 0.05 // of the meetings, created less than 15 minutes ahead
	dayCreated    = 0.10 // of the meetings, created during the day, 15 minutes to 4 hours ahead
	dayDaily      = 0.40 // of the people, with a daily stand-up series
	dayWeekly     = 0.30 // of the people, with a weekly one-to-one series
	dayFloodSize  = 40   // invitations created at one instant, for a few people
	dayFloodEvery = 300  // one such person per this many
)

// dayOffset is the bot's default reminder offset, REMINDER_OFFSETS=10m.
const dayOffset = 10 * time.Minute

// changeKind is what a change does to a meeting.
type changeKind int

const (
	changeCreate changeKind = iota
	changeMove
	changeCancel
)

func (k changeKind) String() string {
	return [...]string{"create", "move", "cancel"}[k]
}

// dayChange is one change to a calendar during the day.
type dayChange struct {
	at       time.Time
	calendar string
	kind     changeKind
	// id is the event's id, or the instance's for one of a series.
	id string
	// ev is the event as the change leaves it (create and move); its
	// Updated is the change's stamp, unique to it, by which the bot's
	// reading of it is recognised.
	ev *calendar.Event
}

// dayMeeting is a meeting of the day as it ends up: its reminder is
// expected at trigger unless it was cancelled.
type dayMeeting struct {
	calendar, id string
	start        time.Time
	cancelled    bool
	// since is when the calendar got the meeting at start (created or
	// moved there); zero for one there before the bot started. A
	// reminder is due at the later of the trigger and since.
	since time.Time
	// beyond is set when its reminder is due after the span measured,
	// or so close to its end that it may not be posted by then.
	beyond bool
}

// trigger is when the meeting's reminder is due.
func (m dayMeeting) trigger() time.Time {
	t := m.start.Add(-dayOffset)
	if m.since.After(t) {
		return m.since
	}
	return t
}

// dayPlan is the whole day: the events in the calendars before the bot
// starts, the changes after, and the meetings as they end up.
type dayPlan struct {
	emails   []string
	before   map[string][]*calendar.Event // by calendar
	changes  []dayChange                  // by time
	meetings []dayMeeting
}

// planDay draws the day of n people from t0 for span: meetings whose
// reminders fall due from 20 minutes after t0 to 5 minutes before its end.
func planDay(n int, seed uint64, t0 time.Time, span time.Duration) (*dayPlan, error) {
	p := &dayPlan{before: map[string][]*calendar.Event{}}
	floods := max(1, n/dayFloodEvery)
	flood := rand.New(rand.NewPCG(seed, 1<<62))
	flooded := map[int]bool{}
	for len(flooded) < min(floods, n) {
		flooded[flood.IntN(n)] = true
	}
	stamps := 0
	for i := range n {
		email := fmt.Sprintf("p%05d@day.example", i)
		p.emails = append(p.emails, email)
		if err := p.person(i, email, seed, t0, span, flooded[i], &stamps); err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(p.changes, func(a, b dayChange) int { return a.at.Compare(b.at) })
	return p, nil
}

// person draws the day of person i.
func (p *dayPlan) person(i int, email string, seed uint64, t0 time.Time, span time.Duration, flooded bool, stamps *int) error {
	rng := rand.New(rand.NewPCG(seed, uint64(i)))
	loc, err := time.LoadLocation(dayZones[rng.IntN(len(dayZones))])
	if err != nil {
		return err
	}
	first, last := t0.Add(20*time.Minute+dayOffset), t0.Add(span-5*time.Minute+dayOffset)
	// Meeting starts on the half hour from 9:00 to 17:30, local time, on
	// every working day the span touches.
	var slots []time.Time
	for d := -1; d <= int(span/(24*time.Hour))+1; d++ {
		day := t0.In(loc).AddDate(0, 0, d)
		for h := 9 * 2; h < 18*2; h++ {
			s := time.Date(day.Year(), day.Month(), day.Day(), h/2, 30*(h%2), 0, 0, loc)
			if !s.Before(first) && !s.After(last) {
				slots = append(slots, s)
			}
		}
	}
	rng.Shuffle(len(slots), func(a, b int) { slots[a], slots[b] = slots[b], slots[a] })
	slots = slots[:min(len(slots), 6+rng.IntN(5))]
	stamp := func(at time.Time) string {
		*stamps++
		return at.Add(time.Duration(*stamps) * time.Microsecond).UTC().Format(time.RFC3339Nano)
	}
	long := t0.Add(-10 * 24 * time.Hour) // when what was there before was created
	for k, start := range slots {
		id := fmt.Sprintf("p%05dm%d", i, k)
		length := 30 * time.Minute
		if rng.Float64() < 0.3 {
			length = time.Hour
		}
		m := dayMeeting{calendar: email, id: id, start: start}
		var ev *calendar.Event
		switch {
		case k == 0 && rng.Float64() < dayDaily:
			// A daily stand-up, since ten days, thirty times.
			m.id, ev = p.series(email, fmt.Sprintf("p%05dd", i), start, 15*time.Minute, 10, "RRULE:FREQ=DAILY;COUNT=30")
		case k == 1 && rng.Float64() < dayWeekly:
			// A weekly one-to-one, since two weeks, twelve times.
			m.id, ev = p.series(email, fmt.Sprintf("p%05dw", i), start, length, 14, "RRULE:FREQ=WEEKLY;COUNT=12")
		default:
			ev = calendartest.NewEvent(id, "Meeting "+id, start, start.Add(length))
			ev.Updated = long.Format(time.RFC3339Nano)
			created := time.Time{}
			switch r := rng.Float64(); {
			case r < daySoon:
				created = start.Add(-time.Minute - within(rng, 14*time.Minute)).Truncate(time.Second)
			case r < daySoon+dayCreated:
				created = start.Add(-15*time.Minute - within(rng, 225*time.Minute)).Truncate(time.Second)
			}
			if created.After(t0.Add(time.Minute)) {
				ev.Updated = stamp(created)
				p.changes = append(p.changes, dayChange{at: created, calendar: email, kind: changeCreate, id: id, ev: ev})
				m.since = created
			} else {
				p.before[email] = append(p.before[email], ev)
			}
		}
		// Moved or cancelled, minutes to hours before its reminder.
		switch r := rng.Float64(); {
		case r < dayMoved:
			at := m.start.Add(-dayOffset - 2*time.Minute - within(rng, 3*time.Hour)).Truncate(time.Second)
			to := m.start.Add(time.Duration(1+rng.IntN(3)) * 30 * time.Minute)
			if rng.IntN(2) == 0 && m.start.Add(-time.Hour-dayOffset).After(at.Add(time.Minute)) {
				to = m.start.Add(-time.Hour) // earlier, when its reminder is still ahead
			}
			if !at.After(t0.Add(time.Minute)) || !at.After(m.since) || to.After(t0.Add(span-5*time.Minute+dayOffset)) {
				break
			}
			moved := *ev // a shallow copy: only its times and stamp change
			moved.Start = &calendar.EventDateTime{DateTime: to.In(loc).Format(time.RFC3339), TimeZone: loc.String()}
			moved.End = &calendar.EventDateTime{DateTime: to.Add(length).In(loc).Format(time.RFC3339), TimeZone: loc.String()}
			if ev.Recurrence != nil { // one instance of the series
				moved = calendar.Event{
					Id: m.id, RecurringEventId: ev.Id, Summary: ev.Summary, Status: "confirmed", EventType: "default",
					OriginalStartTime: &calendar.EventDateTime{DateTime: m.start.In(loc).Format(time.RFC3339), TimeZone: loc.String()},
					Start:             moved.Start, End: moved.End,
				}
				if ev.Recurrence[0] == "RRULE:FREQ=DAILY;COUNT=30" {
					moved.End = &calendar.EventDateTime{DateTime: to.Add(15 * time.Minute).In(loc).Format(time.RFC3339), TimeZone: loc.String()}
				}
			}
			moved.Updated = stamp(at)
			p.changes = append(p.changes, dayChange{at: at, calendar: email, kind: changeMove, id: m.id, ev: &moved})
			m.start, m.since = to, at
		case r < dayMoved+dayCancelled:
			at := m.start.Add(-dayOffset - 2*time.Minute - within(rng, 3*time.Hour)).Truncate(time.Second)
			if !at.After(t0.Add(time.Minute)) || !at.After(m.since) {
				break
			}
			p.changes = append(p.changes, dayChange{at: at, calendar: email, kind: changeCancel, id: m.id})
			m.cancelled = true
		}
		p.meetings = append(p.meetings, m)
	}
	if flooded {
		// Forty invitations at one instant (a course's sessions), every
		// twenty minutes from half an hour later.
		at := t0.Add(2*time.Hour + within(rng, span/2)).Truncate(time.Second)
		for k := range dayFloodSize {
			id := fmt.Sprintf("p%05dx%02d", i, k)
			start := at.Add(30*time.Minute + time.Duration(k)*20*time.Minute)
			ev := calendartest.NewEvent(id, "Session "+id, start.In(loc), start.Add(15*time.Minute).In(loc))
			ev.Updated = stamp(at)
			p.changes = append(p.changes, dayChange{at: at, calendar: email, kind: changeCreate, id: id, ev: ev})
			p.meetings = append(p.meetings, dayMeeting{calendar: email, id: id, start: start, since: at,
				beyond: start.Add(-dayOffset).After(t0.Add(span - 5*time.Minute))})
		}
	}
	return nil
}

// series puts in the calendar before the bot starts a series whose
// instance at start is one of the day's meetings, begun days before, and
// returns that instance's id and the series.
func (p *dayPlan) series(email, id string, start time.Time, length time.Duration, days int, rule string) (string, *calendar.Event) {
	first := start.AddDate(0, 0, -days)
	ev := calendartest.NewEvent(id, "Series "+id, first, first.Add(length))
	ev.Recurrence = []string{rule}
	ev.Updated = first.Add(-24 * time.Hour).UTC().Format(time.RFC3339Nano)
	p.before[email] = append(p.before[email], ev)
	return id + "_" + start.UTC().Format("20060102T150405Z"), ev
}

// within draws a duration in [0, d).
func within(rng *rand.Rand, d time.Duration) time.Duration {
	return time.Duration(rng.Int64N(int64(d)))
}
