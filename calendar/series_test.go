package calendar_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	gcal "google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

// putSeries puts a series with rule from start on, 15 minutes long.
func putSeries(t *testing.T, srv *calendartest.Server, id string, start time.Time, rule string) *gcal.Event {
	t.Helper()
	ev := calendartest.NewEvent(id, "Series "+id, start, start.Add(15*time.Minute))
	ev.Recurrence = []string{rule}
	if err := srv.Put(alice, ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// An incremental sync names the recurring events its items touch, however
// Google reports them: an instance changed or deleted (whose tombstone may
// come without its recurringEventId), or the master alone, which is never
// taken for a meeting. A full sync names none.
func TestSyncNamesTheSeriesItTouches(t *testing.T) {
	at := func(h int) time.Time { return syncStart.Add(time.Duration(h) * time.Hour) }
	tests := []struct {
		name        string
		mode        calendartest.SeriesDeltas
		change      func(t *testing.T, srv *calendartest.Server)
		wantSeries  []string
		wantChanges []string
	}{
		{
			name: "an instance moved",
			change: func(t *testing.T, srv *calendartest.Server) {
				inst, err := srv.Instance(alice, "daily_20261201T090000Z")
				if err != nil {
					t.Fatal(err)
				}
				inst.Start.DateTime, inst.End.DateTime = "2026-12-01T11:00:00Z", "2026-12-01T11:15:00Z"
				if err := srv.Put(alice, inst); err != nil {
					t.Fatal(err)
				}
			},
			wantSeries:  []string{"daily"},
			wantChanges: []string{"daily_20261201T090000Z Series daily 11:00"},
		},
		{
			name:        "an instance deleted: a sparse tombstone",
			change:      func(t *testing.T, srv *calendartest.Server) { mustDelete(t, srv, "daily_20261201T090000Z") },
			wantSeries:  []string{"daily"},
			wantChanges: []string{"daily_20261201T090000Z removed: cancelled"},
		},
		{
			name:        "the series deleted, master only",
			mode:        calendartest.DeltaMasterOnly,
			change:      func(t *testing.T, srv *calendartest.Server) { mustDelete(t, srv, "daily") },
			wantChanges: []string{"daily removed: cancelled"},
		},
		{
			name: "the rule changed, master only",
			mode: calendartest.DeltaMasterOnly,
			change: func(t *testing.T, srv *calendartest.Server) {
				putSeries(t, srv, "daily", at(1), "RRULE:FREQ=DAILY;COUNT=2")
			},
			wantSeries: []string{"daily"},
		},
		{
			name:        "a single event deleted",
			change:      func(t *testing.T, srv *calendartest.Server) { mustDelete(t, srv, "single") },
			wantChanges: []string{"single removed: cancelled"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			putSeries(t, srv, "daily", at(1), "RRULE:FREQ=DAILY;COUNT=4")
			put(t, srv, alice, "single", at(2), time.Hour)
			src, _ := newSource(t, srv, nil)
			m := &fakeMirror{t: t, src: src, cal: alice, w: syncWindow(8)}
			if res := m.sync(); len(res.Series) != 0 || len(res.Changes) != 5 {
				t.Fatalf("full Sync() = series %q, %q; want no series and 5 meetings", res.Series, changes(res))
			}
			srv.SetSeriesDeltas(tt.mode)
			tt.change(t, srv)
			res := m.sync()
			if !slices.Equal(res.Series, tt.wantSeries) || !slices.Equal(changes(res), tt.wantChanges) {
				t.Errorf("incremental Sync() = series %q, changes %q; want %q, %q", res.Series, changes(res), tt.wantSeries, tt.wantChanges)
			}
		})
	}
}

func mustDelete(t *testing.T, srv *calendartest.Server, id string) {
	t.Helper()
	if err := srv.Delete(alice, id); err != nil {
		t.Fatal(err)
	}
}

// Instances reads one recurring event's meetings in a window as the
// calendar holds them now: moved instances at their new time, deleted ones
// left out; a deleted series has none, and one the calendar no longer has
// is meetingbot.ErrGone.
func TestInstances(t *testing.T) {
	srv := newServer(t)
	at := func(h int) time.Time { return syncStart.Add(time.Duration(h) * time.Hour) }
	putSeries(t, srv, "daily", at(-23), "RRULE:FREQ=DAILY") // from Nov 29, without an end
	inst, err := srv.Instance(alice, "daily_20261201T090000Z")
	if err != nil {
		t.Fatal(err)
	}
	inst.Start.DateTime, inst.End.DateTime = "2026-12-01T11:00:00Z", "2026-12-01T11:15:00Z"
	if err := srv.Put(alice, inst); err != nil {
		t.Fatal(err)
	}
	mustDelete(t, srv, "daily_20261202T090000Z")
	srv.SetPageSize(2)
	src, rec := newSource(t, srv, nil)
	w := syncWindow(4) // (Nov 30 08:00, Dec 4 08:00]

	ms, err := src.Instances(context.Background(), alice, "daily", w)
	want := []string{"daily_20261130T090000Z 09:00", "daily_20261201T090000Z 11:00", "daily_20261203T090000Z 09:00"}
	if got := idTimes(ms); err != nil || !slices.Equal(got, want) {
		t.Errorf("Instances(daily) = %q, %v; want %q", got, err, want)
	}
	for _, m := range ms {
		if m.RecurringEventID != "daily" || m.Series != "daily" {
			t.Errorf("instance %s RecurringEventID %q Series %q, want daily", m.ID, m.RecurringEventID, m.Series)
		}
	}
	if got := srv.RequestsTo(calendartest.MethodInstances); got != 2 {
		t.Errorf("events.instances requests = %d, want 2 (pages of 2)", got)
	}
	if got := rec.observed(); len(got) != 2 || got[0] != "events.instances:ok" {
		t.Errorf("Observe = %q, want events.instances:ok twice", got)
	}
	mustDelete(t, srv, "daily")
	if ms, err := src.Instances(context.Background(), alice, "daily", w); err != nil || len(ms) != 0 {
		t.Errorf("Instances(deleted series) = %q, %v; want none", idTimes(ms), err)
	}
	if err := srv.Purge(alice, "daily"); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Instances(context.Background(), alice, "daily", w); !errors.Is(err, meetingbot.ErrGone) || meetingbot.IsPermanent(err) {
		t.Errorf("Instances(purged series) error = %v, want meetingbot.ErrGone", err)
	}
	srv.QueueInstancesFaults(alice, calendartest.ServerError)
	putSeries(t, srv, "weekly", at(1), "RRULE:FREQ=WEEKLY")
	if ms, err := src.Instances(context.Background(), alice, "weekly", w); err != nil || len(ms) != 1 {
		t.Errorf("Instances(weekly) after a 500 = %q, %v; want its one instance, retried", idTimes(ms), err)
	}
	if _, err := src.Instances(context.Background(), alice, "weekly", calendar.Window{From: w.From, Horizon: w.From}); err == nil {
		t.Error("Instances(empty window) error = nil, want one")
	}
	// A 404 without Google's error JSON is a server that lacks the
	// method, not a series gone: unsupported, and not asked again.
	srv.QueueInstancesFaults(alice, calendartest.Fault{Status: 404, Plain: true})
	before := srv.RequestsTo(calendartest.MethodInstances)
	_, err = src.Instances(context.Background(), alice, "weekly", w)
	if !errors.Is(err, errors.ErrUnsupported) || errors.Is(err, meetingbot.ErrGone) || !meetingbot.IsPermanent(err) {
		t.Errorf("Instances(weekly) answered a plain 404 error = %v, want errors.ErrUnsupported, permanent, not meetingbot.ErrGone", err)
	}
	if got := srv.RequestsTo(calendartest.MethodInstances) - before; got != 1 {
		t.Errorf("events.instances requests for a plain 404 = %d, want 1", got)
	}
}

func idTimes(ms []meetingbot.Meeting) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID+" "+m.Start.UTC().Format("15:04"))
	}
	return out
}
