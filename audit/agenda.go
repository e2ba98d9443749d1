package audit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/meetingbot/meetingbot"
)

// AgendaDeps is what an audit of the daily agendas reads: who has one
// (Settings), their Slack profile and the agendas in their DM (Slack),
// and their calendar's days (Source). The ledger is Deps.Ledger.
type AgendaDeps struct {
	Settings interface {
		SlackAgendas(ctx context.Context) ([]meetingbot.SlackSettings, error)
	}
	Slack  AgendaSlack
	Source interface {
		Day(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) (meetingbot.Day, error)
	}
}

// AgendaSlack is the Slack an audit of the agendas reads; *notify.Slack
// provides it.
type AgendaSlack interface {
	// Profile returns the user's profile email and zone now.
	Profile(ctx context.Context, userID string) (email, tz string, err error)
	// Agendas lists the agenda messages in the user's DM posted in
	// [from, to].
	Agendas(ctx context.Context, user string, from, to time.Time) ([]meetingbot.Delivery, error)
}

// agendaLateness is how long after its time an agenda may still go out:
// until local noon, or an hour after an agenda set after noon.
const agendaLateness = 12 * time.Hour

// reconcileAgendas audits, per person with a daily agenda and local day
// whose agenda time falls in the period, the agenda the contract says
// was due (the day has meetings, by the calendar now) against the agenda
// messages in their DM, or the ledger when history cannot be read. Each
// person is a SubReport named by their agenda's pseudo-subscription
// (meetingbot.AgendaSubscription), one Item per local day keyed
// agenda:<user>:<date>, Start the day's first instant and Trigger the
// agenda's time. Days are computed in the zone Slack gives now (the
// stored one if Slack cannot be asked); days before the agenda was last
// set are not judged.
func reconcileAgendas(ctx context.Context, p period, a *AgendaDeps) []SubReport {
	sets, err := a.Settings.SlackAgendas(ctx)
	if err != nil {
		return []SubReport{{Subscription: "agendas", CountedFrom: FromLedger, Error: "read agendas: " + err.Error()}}
	}
	var out []SubReport
	for _, set := range sets {
		if ctx.Err() != nil {
			break
		}
		out = append(out, reconcileAgenda(ctx, p, a, set))
	}
	return out
}

// agendaDay is one local day's agenda as the audit sees it.
type agendaDay struct {
	item     Item
	expected bool // the day has meetings
	pending  bool
}

func reconcileAgenda(ctx context.Context, p period, a *AgendaDeps, set meetingbot.SlackSettings) SubReport {
	sub := meetingbot.AgendaSubscription(set.UserID)
	sr := SubReport{Subscription: sub, CountedFrom: FromLedger}
	days, err := agendaDays(ctx, p, a, set)
	if err != nil {
		sr.Error = err.Error()
		return sr
	}
	entries, err := p.Ledger.Range(ctx, sub, p.from, p.to)
	if err != nil {
		sr.Error = "read ledger: " + err.Error()
		return sr
	}
	ledger := map[string]meetingbot.Entry{}
	for _, e := range entries {
		ledger[e.Key] = e
	}
	by := agendaDeliveries(ctx, p, a, set, entries, &sr)
	lateAfter := p.Interval + meetingbot.LateSlack
	for key, d := range days {
		it := d.item
		ds := by[key]
		e, inLedger := ledger[key]
		if len(ds) > 0 {
			it.Deliveries = ds
			it.Delay = Duration(ds[0].Posted.Sub(it.Trigger))
		}
		switch {
		case !d.expected && len(ds) == 0:
			continue // a day without meetings: nothing due, nothing sent
		case !d.expected:
			it.Reason = "sent for a day without meetings, by the calendar now (meetings cancelled since?)"
			sr.Unexpected = append(sr.Unexpected, it)
			continue
		}
		sr.Expected++
		judge(&sr, it, ds, d.pending, e, inLedger, lateAfter)
	}
	for _, l := range []*[]Item{&sr.Delivered, &sr.Missing, &sr.Duplicated, &sr.Late, &sr.Unexpected, &sr.Pending} {
		slices.SortFunc(*l, byTrigger)
	}
	return sr
}

// agendaDays returns, by key, set's person's local days whose agenda time
// falls in the period, after the agenda was last set: each with its item
// and whether the calendar, read now, has meetings that day. Its error
// says what could not be read.
func agendaDays(ctx context.Context, p period, a *AgendaDeps, set meetingbot.SlackSettings) (map[string]*agendaDay, error) {
	sub := meetingbot.AgendaSubscription(set.UserID)
	email, tz, err := a.Slack.Profile(ctx, set.UserID)
	if err != nil {
		return nil, errors.New("read Slack profile: " + err.Error())
	}
	if tz == "" {
		tz = set.TZ
	}
	loc, err := time.LoadLocation(tz)
	if err != nil || tz == "" {
		loc = time.UTC
	}
	t, err := time.Parse("15:04", set.Agenda)
	if err != nil {
		return nil, fmt.Errorf("agenda time %q: want HH:MM", set.Agenda)
	}
	days := map[string]*agendaDay{}
	first := p.from.In(loc).AddDate(0, 0, -1)
	for d := time.Date(first.Year(), first.Month(), first.Day(), 12, 0, 0, 0, loc); !d.After(p.to.In(loc).AddDate(0, 0, 1)); d = time.Date(d.Year(), d.Month(), d.Day()+1, 12, 0, 0, 0, loc) {
		y, m, dd := d.Date()
		at := meetingbot.AgendaTime(y, m, dd, t.Hour(), t.Minute(), loc)
		if !p.contains(at) || at.After(p.now) || at.Before(set.UpdatedAt) {
			continue
		}
		date := d.Format(time.DateOnly)
		start := meetingbot.AgendaTime(y, m, dd, 0, 0, loc)
		end := meetingbot.AgendaTime(y, m, dd+1, 0, 0, loc)
		day, err := a.Source.Day(ctx, meetingbot.Subscription{ID: sub, Kind: meetingbot.KindAgenda, CalendarID: email, Reader: set.UserID, Destination: set.UserID}, start.Add(-time.Nanosecond), end.Add(-time.Nanosecond))
		if err != nil {
			return nil, fmt.Errorf("read calendar %s: %v", email, err)
		}
		it := Item{Subscription: sub, Key: meetingbot.AgendaKey(set.UserID, date), Title: fmt.Sprintf("agenda of %s (%d meetings)", date, len(day.Meetings)),
			Start: start.UTC(), Trigger: at.UTC()}
		days[it.Key] = &agendaDay{item: it, expected: len(day.Meetings) > 0, pending: p.now.Sub(at) <= p.Interval+meetingbot.LateSlack}
	}
	return days, nil
}

// agendaDeliveries returns, by key, the agendas found in set's person's
// DM, or in the ledger (entries) when Slack's history cannot be read,
// and says in sr which it counted from.
func agendaDeliveries(ctx context.Context, p period, a *AgendaDeps, set meetingbot.SlackSettings, entries []meetingbot.Entry, sr *SubReport) map[string][]Delivery {
	by := map[string][]Delivery{}
	sent, err := a.Slack.Agendas(ctx, set.UserID, p.from.Add(-historyMargin), p.to.Add(agendaLateness+historyMargin))
	if err != nil {
		sr.SlackError = err.Error()
		for _, e := range entries {
			if e.Outcome == meetingbot.Sent {
				by[e.Key] = []Delivery{{Channel: e.Channel, TS: e.MessageTS, Posted: e.RecordedAt, From: FromLedger}}
			}
		}
		return by
	}
	sr.CountedFrom = FromSlack
	for _, s := range sent {
		by[s.Key] = append(by[s.Key], Delivery{Channel: s.Channel, TS: s.TS, Posted: s.Posted.UTC(), From: FromSlack})
	}
	return by
}
