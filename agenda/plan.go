package agenda

import (
	"fmt"
	"time"

	"github.com/meetingbot/meetingbot"
)

// plan is one person's agenda of one local day as a pass sees it.
type plan struct {
	user     string
	hhmm     string // the setting it was planned for
	calendar string // the profile email, "" when Slack did not say
	zone     *time.Location
	date     string    // local date, "2006-01-02"
	dayStart time.Time // the day's first instant
	dayEnd   time.Time // the next day's first instant
	at       time.Time // when it is due
	deadline time.Time // after this it is skipped: too late to be of use
}

func (p plan) key() string { return meetingbot.AgendaKey(p.user, p.date) }

// entry is the plan's ledger entry, claimed at now.
func (p plan) entry(late bool) meetingbot.Entry {
	return meetingbot.Entry{
		Subscription: meetingbot.AgendaSubscription(p.user), Kind: meetingbot.KindAgenda, Key: p.key(),
		Start: p.dayStart.UTC(), TriggerAt: p.at.UTC(), Late: late,
	}
}

// parseHHMM reads "HH:MM".
func parseHHMM(s string) (hh, mm int, err error) {
	t, err := time.Parse("15:04", s)
	if err != nil {
		return 0, 0, fmt.Errorf("agenda time %q: want HH:MM", s)
	}
	return t.Hour(), t.Minute(), nil
}

// zoneOf loads a Slack tz, UTC for none or one Go does not know.
func zoneOf(tz string) *time.Location {
	if tz == "" {
		return time.UTC
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return time.UTC
	}
	return loc
}

// LateUntil returns until when an agenda due at at on a day whose noon is
// noon may still go out late: noon for a morning agenda (a morning view
// after noon is no use); an hour after at for one set at or after noon.
func LateUntil(at, noon time.Time) time.Time {
	if at.Before(noon) {
		return noon
	}
	return at.Add(time.Hour)
}

// plansAround returns the plans of the local days around now in loc
// (yesterday, today, tomorrow) for an agenda at hh:mm. Each day's instants
// come from time.Date in the zone (meetingbot.AgendaTime), never from
// adding 24 hours to another day's.
func plansAround(user, hhmm, email string, loc *time.Location, now time.Time) ([]plan, error) {
	hh, mm, err := parseHHMM(hhmm)
	if err != nil {
		return nil, err
	}
	local := now.In(loc)
	var out []plan
	for _, d := range []int{-1, 0, 1} {
		y, m, day := local.Date()
		y, m, day = time.Date(y, m, day+d, 12, 0, 0, 0, loc).Date()
		at := meetingbot.AgendaTime(y, m, day, hh, mm, loc)
		noon := meetingbot.AgendaTime(y, m, day, 12, 0, loc)
		out = append(out, plan{
			user: user, hhmm: hhmm, calendar: email, zone: loc,
			date:     fmt.Sprintf("%04d-%02d-%02d", y, m, day),
			dayStart: dayStart(time.Date(y, m, day, 12, 0, 0, 0, loc)),
			dayEnd:   dayStart(time.Date(y, m, day+1, 12, 0, 0, 0, loc)),
			at:       at,
			deadline: LateUntil(at, noon),
		})
	}
	return out, nil
}

// dayStart returns the first instant of noon's local day. Midnight may
// fall in a gap (a few zones change at 00:00): the day then starts at the
// first instant after it.
func dayStart(noon time.Time) time.Time {
	y, m, d := noon.Date()
	return meetingbot.AgendaTime(y, m, d, 0, 0, noon.Location())
}
