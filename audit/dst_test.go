package audit_test

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/audit"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/scheduler"
)

// TestReconcileDSTFallBack drives the real scheduler across the night of
// 2026-11-01 in New York, when 01:00-02:00 happens twice, for a daily 01:30
// meeting, and audits the three days around it.
func TestReconcileDSTFallBack(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	night := meetingbot.Subscription{ID: "night", CalendarID: "ny@example.com", Destination: "#standup", Offsets: []time.Duration{10 * time.Minute}}
	first := time.Date(2026, 10, 30, 1, 30, 0, 0, ny)
	ev := calendartest.NewEvent("standup", "Standup", first, first.Add(30*time.Minute))
	ev.Recurrence = []string{"RRULE:FREQ=DAILY"}
	e.cal.put(night.CalendarID, ev)

	const tick = 5 * time.Minute
	from := time.Date(2026, 10, 31, 0, 0, 0, 0, ny) // 04:00Z
	to := time.Date(2026, 11, 3, 0, 0, 0, 0, ny)    // 05:00Z: 73 hours later
	sched, err := scheduler.New([]meetingbot.Subscription{night}, e.cal.src, e.slack, e.store, scheduler.Options{
		Clock: e.clock, Interval: tick, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	for now := from; now.Before(to); now = now.Add(tick) {
		e.clock.Set(now)
		if err := sched.Tick(context.Background()); err != nil {
			t.Fatal(err)
		}
	}

	r, err := audit.Reconcile(context.Background(), audit.Input{
		Deps: audit.Deps{
			Subscriptions: []meetingbot.Subscription{night}, Source: e.cal.src, Ledger: e.store, Slack: e.slack,
			Interval: tick, Now: func() time.Time { return to },
		},
		From: from, To: to,
	})
	if err != nil {
		t.Fatal(err)
	}
	s := r.Subscriptions[0]
	if c := s.Counts(); c != (audit.Counts{Expected: 3, Delivered: 3}) || r.Problems() || s.CountedFrom != audit.FromSlack {
		t.Fatalf("Reconcile(DST weekend) = %+v counted from %s, want 3 expected and 3 delivered, nothing else", c, s.CountedFrom)
	}
	var triggers []string
	for _, it := range s.Delivered {
		triggers = append(triggers, it.Trigger.Format(time.RFC3339))
	}
	// Instants: 24 hours, then 25, between the reminders.
	want := []string{"2026-10-31T05:20:00Z", "2026-11-01T05:20:00Z", "2026-11-02T06:20:00Z"}
	if !slices.Equal(triggers, want) {
		t.Errorf("Reconcile(DST weekend) delivered triggers = %v, want %v", triggers, want)
	}

	// A report keyed by local wall time would not have been clean.
	dups, gaps := localKeyed(ny, from, to, 1, 30, s.Delivered)
	if !slices.Equal(dups, []string{"2026-11-01 01:30"}) || !slices.Equal(gaps, []string{"2026-11-01 01:30 EST"}) {
		t.Errorf("localKeyed() = duplicates %v, gaps %v; want the repeated 01:30 shown as both", dups, gaps)
	}
}

// localKeyed is what an audit keyed by local wall time makes of a daily
// hh:mm meeting in loc: it expects one reminder wherever the wall clock
// reads hh:mm in [from, to), keys expectations and deliveries by that wall
// clock ("2006-01-02 15:04"), and returns the keys it expects more than once
// (a duplicate row) and the expectations no delivery is left for (a gap).
// On a fall-back night the same wall clock names two instants.
func localKeyed(loc *time.Location, from, to time.Time, hh, mm int, delivered []audit.Item) (dups, gaps []string) {
	left := map[string]int{}
	for _, it := range delivered {
		left[it.Start.In(loc).Format("2006-01-02 15:04")]++
	}
	seen := map[string]bool{}
	for t := from; t.Before(to); t = t.Add(time.Minute) {
		l := t.In(loc)
		if l.Hour() != hh || l.Minute() != mm {
			continue
		}
		key := l.Format("2006-01-02 15:04")
		if seen[key] {
			dups = append(dups, key)
		}
		seen[key] = true
		if left[key] == 0 {
			gaps = append(gaps, l.Format("2006-01-02 15:04 MST"))
			continue
		}
		left[key]--
	}
	return dups, gaps
}
