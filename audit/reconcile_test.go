package audit_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/audit"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// seedDay lives through a morning of team's calendar (offset 10m, tick 30s)
// and leaves the calendar, the ledger and Slack as the bot would have:
//
//	evt-ontime  08:30  reminded at 08:20:02
//	evt-down    09:00  bot down 08:45-09:03: ledger says skipped: started
//	evt-dup     09:30  posted at 09:20:01, crash before the ledger write;
//	                   the restarted bot could not read history and posted
//	                   again at 09:21: in Slack twice, once in the ledger
//	evt-late    10:00  reminded at 09:53 (bot stalled)
//	evt-moved   10:30  reminded at 10:20, then moved to 11:00: reminded
//	                   again at 10:50 for the new time
//	evt-failed  10:45  failed permanently at 10:35 (channel_not_found)
//	evt-cancel  11:30  reminded at 11:20, then cancelled
//	evt-gone    11:15  cancelled before its trigger: nothing
//	evt-unknown 11:40  nothing anywhere
//	evt-pending 12:09:50 due at 11:59:50, a tick before the audit at 12:00
//
// plus a reminder of another subscription sharing the channel, and a 5m
// reminder for evt-ontime that team does not configure. Posts go in time
// order: the emulator, like Slack, hands out increasing timestamps.
func seedDay(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	cal := team.CalendarID
	put := func(id string, start time.Time) meetingbot.Meeting {
		m := meeting(id, strings.TrimPrefix(id, "evt-"), start)
		e.cal.put(cal, calendartest.NewEvent(m.ID, m.Title, m.Start, m.End))
		return m
	}
	ten := 10 * time.Minute

	ontime := put("evt-ontime", at(8, 30, 0))
	e.deliver(reminder(team, ontime, ten), at(8, 20, 2))
	other := team
	other.ID = "other"
	e.post(reminder(other, ontime, ten), at(8, 20, 3))
	e.post(reminder(team, ontime, 5*time.Minute), at(8, 25, 0))

	down := put("evt-down", at(9, 0, 0))
	e.record(e.claim(reminder(team, down, ten), at(9, 3, 0)), meetingbot.Skipped, meetingbot.ReasonStarted, "started", meetingbot.Receipt{}, at(9, 3, 0))

	dup := reminder(team, put("evt-dup", at(9, 30, 0)), ten)
	e.claim(dup, at(9, 20, 1))
	e.post(dup, at(9, 20, 1)) // killed here, before the ledger write
	en := e.claim(dup, at(9, 21, 0))
	e.record(en, meetingbot.Sent, meetingbot.ReasonResent, "resent after an interrupted send", e.post(dup, at(9, 21, 0)), at(9, 21, 0))

	e.deliver(reminder(team, put("evt-late", at(10, 0, 0)), ten), at(9, 53, 0))

	moved := put("evt-moved", at(10, 30, 0))
	first := reminder(team, moved, ten)
	rc := e.deliver(first, at(10, 20, 0))
	moved = put("evt-moved", at(11, 0, 0))
	e.edit(first, rc, meetingbot.EditMoved, at(11, 0, 0), at(10, 25, 0))
	e.deliver(reminder(team, moved, ten), at(10, 50, 0))

	failed := reminder(team, put("evt-failed", at(10, 45, 0)), ten)
	e.record(e.claim(failed, at(10, 35, 0)), meetingbot.Failed, meetingbot.ReasonPermanent,
		`notify: subscription "team": channel_not_found: invite the bot`, meetingbot.Receipt{}, at(10, 35, 1))

	cancel := put("evt-cancel", at(11, 30, 0))
	e.deliver(reminder(team, cancel, ten), at(11, 20, 0))
	e.cal.cancel(cal, cancel.ID)

	put("evt-gone", at(11, 15, 0))
	e.cal.cancel(cal, "evt-gone")

	put("evt-unknown", at(11, 40, 0))
	put("evt-pending", at(12, 9, 50))

	return e
}

// statuses lists a report's items as "STATUS event-id offset", sorted, so
// a whole report compares in one line.
func statuses(s audit.SubReport) []string {
	var out []string
	for _, l := range []struct {
		name  string
		items []audit.Item
	}{{"delivered", s.Delivered}, {"missing", s.Missing}, {"duplicated", s.Duplicated}, {"late", s.Late},
		{"superseded", s.Superseded}, {"unexpected", s.Unexpected}, {"pending", s.Pending}} {
		for _, it := range l.items {
			out = append(out, fmt.Sprintf("%s %s %s", l.name, it.EventID, it.Offset))
		}
	}
	sort.Strings(out)
	return out
}

func find(items []audit.Item, eventID string) (audit.Item, bool) {
	for _, it := range items {
		if it.EventID == eventID {
			return it, true
		}
	}
	return audit.Item{}, false
}

func TestReconcile(t *testing.T) {
	e := seedDay(t)
	r, err := audit.Reconcile(context.Background(), e.input(at(8, 0, 0), at(12, 0, 0), at(12, 0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Subscriptions) != 1 {
		t.Fatalf("Reconcile() has %d subscriptions, want 1", len(r.Subscriptions))
	}
	s := r.Subscriptions[0]
	if s.CountedFrom != audit.FromSlack || s.SlackError != "" || s.Error != "" {
		t.Errorf("Reconcile() counted from %q (slack error %q, error %q), want slack", s.CountedFrom, s.SlackError, s.Error)
	}
	want := []string{
		"delivered evt-late 10m",
		"delivered evt-moved 10m",
		"delivered evt-ontime 10m",
		"duplicated evt-dup 10m",
		"late evt-late 10m",
		"missing evt-down 10m",
		"missing evt-failed 10m",
		"missing evt-unknown 10m",
		"pending evt-pending 10m",
		"superseded evt-cancel 10m",
		"superseded evt-moved 10m",
		"unexpected evt-ontime 5m",
	}
	if got := statuses(s); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Reconcile() items:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s.Expected != 8 {
		t.Errorf("Reconcile() Expected = %d, want 8", s.Expected)
	}
	if !r.Problems() {
		t.Errorf("Problems() = false, want true")
	}

	reasons := []struct {
		list   []audit.Item
		event  string
		reason string
	}{
		{s.Missing, "evt-down", "skipped: first taken up at 2026-03-02 09:03:00Z, 13m0s after its trigger and 3m0s after the meeting started"},
		{s.Missing, "evt-failed", "failed permanently: notify: subscription \"team\": channel_not_found"},
		{s.Missing, "evt-unknown", "unknown: no ledger row"},
		{s.Duplicated, "evt-dup", "in Slack 2 times, once in the ledger"},
		{s.Late, "evt-late", "delivered 3m0s after its trigger"},
		{s.Superseded, "evt-moved", "moved to 2026-03-02 11:00:00Z; message edited: moved to 2026-03-02 11:00:00Z"},
		{s.Superseded, "evt-cancel", "no longer on the calendar: cancelled, declined, or moved outside the audited window; message not edited"},
		{s.Unexpected, "evt-ontime", "offset 5m is not configured"},
	}
	for _, tt := range reasons {
		it, ok := find(tt.list, tt.event)
		if !ok || !strings.Contains(it.Reason, tt.reason) {
			t.Errorf("Reconcile() reason of %s = %q, want it to contain %q", tt.event, it.Reason, tt.reason)
		}
	}

	dup, _ := find(s.Duplicated, "evt-dup")
	if len(dup.Deliveries) != 2 || dup.Deliveries[0].Posted != at(9, 20, 1) || dup.Deliveries[1].Posted != at(9, 21, 0) {
		t.Errorf("Reconcile() evt-dup deliveries = %+v, want Slack posts at 09:20:01 and 09:21:00", dup.Deliveries)
	}
	moved, _ := find(s.Superseded, "evt-moved")
	if want := at(10, 30, 0); !moved.Start.Equal(want) {
		t.Errorf("Reconcile() superseded evt-moved start = %v, want %v", moved.Start, want)
	}
	cancelled, _ := find(s.Superseded, "evt-cancel")
	if moved.Message != audit.Edited || cancelled.Message != audit.NotEdited {
		t.Errorf("Reconcile() superseded messages: evt-moved %q, evt-cancel %q; want %q and %q", moved.Message, cancelled.Message, audit.Edited, audit.NotEdited)
	}
	for _, l := range [][]audit.Item{s.Delivered, s.Missing, s.Duplicated, s.Late, s.Unexpected, s.Pending} {
		for _, it := range l {
			if it.Message != "" {
				t.Errorf("Reconcile() %s %s: message %q, want none outside superseded", it.EventID, it.Offset, it.Message)
			}
		}
	}
	late, _ := find(s.Late, "evt-late")
	if late.Delay != audit.Duration(3*time.Minute) {
		t.Errorf("Reconcile() evt-late delay = %v, want 3m", late.Delay)
	}
}

// TestReconcileLedgerOnly shows what the ledger alone cannot see: the crash
// duplicate is one row there, so it passes as delivered (late, since the row
// was written at the second post).
func TestReconcileLedgerOnly(t *testing.T) {
	tests := []struct {
		name  string
		tweak func(*env, *audit.Input)
		note  string
	}{
		{"no Slack client", func(_ *env, in *audit.Input) { in.Slack = nil }, ""},
		{"history unreadable", func(e *env, _ *audit.Input) {
			e.srv.Fail("conversations.history", "", slacktest.Fault{Error: "missing_scope"})
		}, "missing_scope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := seedDay(t)
			in := e.input(at(8, 0, 0), at(12, 0, 0), at(12, 0, 0))
			tt.tweak(e, &in)
			r, err := audit.Reconcile(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			s := r.Subscriptions[0]
			if s.CountedFrom != audit.FromLedger || !strings.Contains(s.SlackError, tt.note) || (tt.note == "") != (s.SlackError == "") {
				t.Errorf("Reconcile(%s) counted from %q, slack error %q, want ledger and an error naming %q", tt.name, s.CountedFrom, s.SlackError, tt.note)
			}
			want := []string{
				"delivered evt-dup 10m", // the duplicate the ledger cannot see
				"delivered evt-late 10m",
				"delivered evt-moved 10m",
				"delivered evt-ontime 10m",
				"late evt-dup 10m",
				"late evt-late 10m",
				"missing evt-down 10m",
				"missing evt-failed 10m",
				"missing evt-unknown 10m",
				"pending evt-pending 10m",
				"superseded evt-cancel 10m",
				"superseded evt-moved 10m",
			}
			if got := statuses(s); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("Reconcile(%s) items:\n%s\nwant:\n%s", tt.name, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			late, _ := find(s.Late, "evt-late")
			if len(late.Deliveries) != 1 || late.Deliveries[0].From != audit.FromLedger || late.Deliveries[0].Posted != at(9, 53, 0) {
				t.Errorf("Reconcile(%s) evt-late deliveries = %+v, want the ledger's RecordedAt 09:53", tt.name, late.Deliveries)
			}
		})
	}
}

// TestReconcileWindow checks the period's edges: [from, to), and nothing
// after now.
func TestReconcileWindow(t *testing.T) {
	e := newEnv(t)
	for _, start := range []time.Time{at(9, 10, 0), at(9, 10, 1), at(10, 10, 0), at(10, 10, 1), at(10, 40, 0)} {
		e.cal.put(team.CalendarID, calendartest.NewEvent(fmt.Sprintf("evt%s", start.Format("150405")), "m", start, start.Add(time.Hour)))
	}
	tests := []struct {
		from, to, now time.Time
		want          int
	}{
		{at(9, 0, 0), at(10, 0, 0), at(11, 0, 0), 2},   // triggers 09:00:00 and 09:00:01
		{at(9, 0, 1), at(10, 0, 1), at(11, 0, 0), 2},   // 09:00:01 and 10:00:00
		{at(9, 0, 0), at(11, 0, 0), at(10, 0, 0), 3},   // up to now, inclusive
		{at(9, 0, 0), at(11, 0, 0), at(12, 0, 0), 5},   // everything
		{at(10, 30, 1), at(11, 0, 0), at(12, 0, 0), 0}, // nothing
	}
	for _, tt := range tests {
		r, err := audit.Reconcile(context.Background(), e.input(tt.from, tt.to, tt.now))
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Subscriptions[0].Expected; got != tt.want {
			t.Errorf("Reconcile([%s, %s) at %s) Expected = %d, want %d", tt.from.Format("15:04:05"), tt.to.Format("15:04:05"), tt.now.Format("15:04:05"), got, tt.want)
		}
	}
	if _, err := audit.Reconcile(context.Background(), e.input(at(10, 0, 0), at(10, 0, 0), at(12, 0, 0))); err == nil {
		t.Errorf("Reconcile(empty period) = nil error, want one")
	}
}

// failingSource is a calendar that cannot be read.
type failingSource struct{}

func (failingSource) Meetings(context.Context, meetingbot.Subscription, time.Time, time.Time) ([]meetingbot.Meeting, error) {
	return nil, meetingbot.Permanent(fmt.Errorf("calendar: 404 notFound: share the calendar"))
}

func TestReconcileCalendarUnreadable(t *testing.T) {
	e := seedDay(t)
	in := e.input(at(8, 0, 0), at(12, 0, 0), at(12, 0, 0))
	in.Source = failingSource{}
	r, err := audit.Reconcile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Subscriptions[0]; !strings.Contains(s.Error, "share the calendar") || s.Expected != 0 || !r.Incomplete() || r.Problems() {
		t.Errorf("Reconcile(unreadable calendar) = %+v, Incomplete %v, Problems %v; want an error, not audited", s, r.Incomplete(), r.Problems())
	}
}

// TestReconcileOddities covers deliveries the bot should not produce but an
// audit must still show: a sent ledger row whose message is gone from Slack,
// and a reminder message whose metadata cannot be read.
func TestReconcileOddities(t *testing.T) {
	e := newEnv(t)
	m := meeting("evtgone", "Deleted message", at(9, 0, 0))
	e.cal.put(team.CalendarID, calendartest.NewEvent(m.ID, m.Title, m.Start, m.End))
	r := reminder(team, m, 10*time.Minute)
	e.record(e.claim(r, at(8, 50, 0)), meetingbot.Sent, "", "", meetingbot.Receipt{Channel: "C0STANDUP1", TS: "1772441400.000000"}, at(8, 50, 0))
	e.clock.Set(at(8, 55, 0))
	e.srv.AddMessage(slacktest.Message{Channel: "C0STANDUP1", Text: "reminder",
		Metadata: &slacktest.Metadata{EventType: notify.EventType, EventPayload: map[string]any{"key": "garbled", "subscription": "team"}}})

	rep, err := audit.Reconcile(context.Background(), e.input(at(8, 0, 0), at(10, 0, 0), at(10, 0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Subscriptions[0]
	if it, ok := find(s.Missing, "evtgone"); !ok || !strings.Contains(it.Reason, "the ledger says sent (ts 1772441400.000000) but the message is not in Slack") {
		t.Errorf("Reconcile() missing = %+v, want evtgone, sent per the ledger, not in Slack", s.Missing)
	}
	if len(s.Unexpected) != 1 || s.Unexpected[0].Reason != "reminder metadata unreadable" || s.Unexpected[0].Deliveries[0].Posted != at(8, 55, 0) {
		t.Errorf("Reconcile() unexpected = %+v, want the garbled message posted at 08:55", s.Unexpected)
	}
}

// A crowd's reminder posted ahead of its trigger (within a quarter of its
// offset) is not due yet when the audit runs between the post and the
// trigger: it is not unexpected, and once its trigger has passed it is
// delivered on time.
func TestReconcilePostedAhead(t *testing.T) {
	e := newEnv(t)
	ahead := meeting("evt-ahead", "ahead", at(12, 0, 0))
	e.cal.put(team.CalendarID, calendartest.NewEvent(ahead.ID, ahead.Title, ahead.Start, ahead.End))
	e.deliver(reminder(team, ahead, 10*time.Minute), at(11, 48, 0)) // 2m ahead of its 11:50 trigger
	for _, tt := range []struct {
		now  time.Time
		want []string
	}{
		{at(11, 49, 0), nil},
		{at(11, 51, 0), []string{"delivered evt-ahead 10m"}},
	} {
		r, err := audit.Reconcile(context.Background(), e.input(at(11, 0, 0), tt.now, tt.now))
		if err != nil {
			t.Fatal(err)
		}
		if got := statuses(r.Subscriptions[0]); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("Reconcile() at %s items:\n%s\nwant:\n%s", tt.now.Format("15:04"), strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
	}
}
