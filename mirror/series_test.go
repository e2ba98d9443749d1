package mirror_test

import (
	"bytes"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	gcal "google.golang.org/api/calendar/v3"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/mirror"
)

// putDaily puts a daily series of count instances from at(h) on.
func (w *world) putDaily(id string, h, count int) {
	w.t.Helper()
	ev := calendartest.NewEvent(id, "Daily "+id, at(h), at(h).Add(15*time.Minute))
	ev.Recurrence = []string{"RRULE:FREQ=DAILY;COUNT=" + strconv.Itoa(count)}
	require.NoError(w.t, w.cal.Put(alice, ev))
}

// A series deleted on a calendar whose incremental sync reports the
// master alone, or only the instances up to a horizon, leaves the mirror
// whole: the fire-time check (FreshMeetings) no longer finds any of its
// instances, so none is reminded. Without the re-read of the series, the
// mirror kept its instances (the stale instance the check confirmed).
func TestDeletedSeriesLeavesTheMirror(t *testing.T) {
	for _, c := range []struct {
		name    string
		mode    calendartest.SeriesDeltas
		horizon time.Duration
	}{
		{"every instance", calendartest.DeltaEveryInstance, 0},
		{"master only", calendartest.DeltaMasterOnly, 0},
		{"instances up to a horizon", calendartest.DeltaEveryInstance, 2 * 24 * time.Hour},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.putDaily("standup", 1, 6)
			w.put("single", at(2))
			m := w.mirror(mirror.Options{})
			s := sub("alice", alice)
			require.Len(t, w.meetings(m, s, start, at(24*7)), 7, "Meetings before the deletion")
			w.cal.SetSeriesDeltas(c.mode)
			w.cal.SetDeltaHorizon(c.horizon)

			require.NoError(t, w.cal.Delete(alice, "standup"))
			w.clock.Advance(time.Minute)
			dec4 := at(24*4 + 1)
			ms, err := m.FreshMeetings(t.Context(), s, dec4.Add(-time.Millisecond), dec4) // the fire-time check of Dec 4's instance
			require.NoError(t, err)
			assert.Empty(t, show(ms), "FreshMeetings at the deleted series' instance on Dec 4")
			assert.Equal(t, []string{"single 10:00"}, w.meetings(m, s, start, at(24*7)), "Meetings after the deletion")
		})
	}
}

// A change of a recurring event is read again in the mirror's window
// whatever the sync reports of it: a rule cut short or a series split
// "this and following", reported by the masters alone, leave the mirror as
// reading the calendar does.
func TestChangedSeriesIsReadAgain(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(w *world)
	}{
		{"rule cut short", func(w *world) { w.putDaily("standup", 1, 2) }},
		{"split this and following", func(w *world) {
			_, err := w.cal.SplitFollowing(alice, "standup_20261202T090000Z", func(e *gcal.Event) {
				e.Summary = "Standup (later)"
				e.Start.DateTime, e.End.DateTime = "2026-12-02T09:30:00Z", "2026-12-02T09:45:00Z"
			})
			require.NoError(w.t, err)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.putDaily("standup", 1, 6)
			m := w.mirror(mirror.Options{})
			s := sub("alice", alice)
			require.Len(t, w.meetings(m, s, start, at(24*7)), 6)
			w.cal.SetSeriesDeltas(calendartest.DeltaMasterOnly)
			c.change(w)
			require.NoError(t, m.Sync(t.Context(), alice))
			direct, err := w.src.Meetings(t.Context(), s, start, at(24*7))
			require.NoError(t, err)
			assert.Equal(t, show(direct), w.meetings(m, s, start, at(24*7)), "Meetings after the change: as the calendar reads")
		})
	}
}

// A change of a weekly series without an end, all of whose instances lie
// beyond the window, lists hundreds of instances the mirror never held:
// they cost no store write, and one call reads the series' (empty) window.
func TestFarSeriesCostsNoWrite(t *testing.T) {
	w := newWorld(t)
	w.put("a", at(1))
	ev := calendartest.NewEvent("far", "Far", at(24*30), at(24*30).Add(time.Hour))
	ev.Recurrence = []string{"RRULE:FREQ=WEEKLY"}
	require.NoError(t, w.cal.Put(alice, ev))
	m := w.mirror(mirror.Options{})
	s := sub("alice", alice)
	w.meetings(m, s, start, at(24))
	saved, ok, err := w.store.CalendarSync(t.Context(), alice)
	require.NoError(t, err)
	require.True(t, ok)

	ev.Summary = "Far (renamed)"
	require.NoError(t, w.cal.Put(alice, ev))
	w.clock.Advance(time.Minute)
	require.NoError(t, m.Sync(t.Context(), alice))
	after, _, err := w.store.CalendarSync(t.Context(), alice)
	require.NoError(t, err)
	assert.Equal(t, saved, after, "the sync kept in the store: not written, as for a sync that changed nothing")
	assert.Equal(t, 1, w.cal.RequestsTo(calendartest.MethodInstances), "events.instances calls")
	assert.Equal(t, []string{"a 09:00"}, w.meetings(m, s, start, at(24*8)), "Meetings")
}

// A read of a series that fails fails the sync: its token is not kept,
// so the next sync asks for the same changes and reads the series again.
// A series the calendar no longer has leaves the mirror.
func TestSeriesReadFailures(t *testing.T) {
	w := newWorld(t)
	w.putDaily("standup", 1, 6)
	m := w.mirror(mirror.Options{})
	s := sub("alice", alice)
	require.Len(t, w.meetings(m, s, start, at(24*7)), 6)
	before, _, err := w.store.CalendarSync(t.Context(), alice)
	require.NoError(t, err)

	w.cal.SetSeriesDeltas(calendartest.DeltaMasterOnly)
	w.putDaily("standup", 1, 3)
	w.cal.QueueInstancesFaults(alice, calendartest.Forbidden)
	require.Error(t, m.Sync(t.Context(), alice), "Sync with events.instances refused")
	after, _, err := w.store.CalendarSync(t.Context(), alice)
	require.NoError(t, err)
	assert.Equal(t, before.Token, after.Token, "the token after a failed read of the series")
	assert.Len(t, w.meetings(m, s, start, at(24*7)), 6, "Meetings after the failed sync: the last reading")

	require.NoError(t, m.Sync(t.Context(), alice))
	assert.Len(t, w.meetings(m, s, start, at(24*7)), 3, "Meetings after the next sync")

	// Gone from the calendar (404 to events.instances): its instances go.
	w.putDaily("standup", 1, 4)
	w.cal.QueueInstancesFaults(alice, calendartest.Fault{Status: 404, Domain: "global", Reason: "notFound", Message: "Not Found"})
	require.NoError(t, m.Sync(t.Context(), alice))
	assert.Empty(t, w.meetings(m, s, start, at(24*7)), "Meetings after the series read 404")
}

// A Calendar API at GOOGLE_API_ENDPOINT that does not serve
// events.instances (a plain 404) leaves a series as the sync reports it:
// an instance moved is moved, and the others stay, rather than the whole
// series taken as deleted. It is said once in the log.
func TestSeriesOfACalendarWithoutInstancesIsTakenAsTheSyncSaysIt(t *testing.T) {
	w := newWorld(t)
	w.putDaily("standup", 1, 6)
	var logs bytes.Buffer
	m := w.mirror(mirror.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	s := sub("alice", alice)
	require.Len(t, w.meetings(m, s, start, at(24*7)), 6)

	inst, err := w.cal.Instance(alice, "standup_20261202T090000Z")
	require.NoError(t, err)
	inst.Start.DateTime, inst.End.DateTime = "2026-12-02T11:00:00Z", "2026-12-02T11:15:00Z"
	require.NoError(t, w.cal.Put(alice, inst))
	plain := calendartest.Fault{Status: 404, Plain: true}
	w.cal.QueueInstancesFaults(alice, plain, plain)
	require.NoError(t, m.Sync(t.Context(), alice))
	got := w.meetings(m, s, start, at(24*7))
	assert.Len(t, got, 6, "Meetings after a sync whose series read was not served: %q", got)
	assert.Contains(t, got, "standup_20261202T090000Z 11:00", "the moved instance, as the sync reported it")

	inst.Start.DateTime, inst.End.DateTime = "2026-12-02T12:00:00Z", "2026-12-02T12:15:00Z"
	require.NoError(t, w.cal.Put(alice, inst))
	w.cal.QueueInstancesFaults(alice, plain)
	require.NoError(t, m.Sync(t.Context(), alice))
	assert.Contains(t, w.meetings(m, s, start, at(24*7)), "standup_20261202T090000Z 12:00", "the instance moved again")
	assert.Equal(t, 1, strings.Count(logs.String(), "does not serve events.instances"), "lines saying so: %s", logs.String())
}

// A sync that touches many series reads each once, several at once, and
// leaves the mirror as reading the calendar does.
func TestManySeriesReadAtOnce(t *testing.T) {
	w := newWorld(t)
	for i := range 12 {
		w.putDaily("s"+strconv.Itoa(i), 1+i, 6)
	}
	m := w.mirror(mirror.Options{})
	s := sub("alice", alice)
	require.Len(t, w.meetings(m, s, start, at(24*7)), 72)
	w.cal.SetSeriesDeltas(calendartest.DeltaMasterOnly)
	for i := range 12 {
		w.putDaily("s"+strconv.Itoa(i), 1+i, 2)
	}
	require.NoError(t, m.Sync(t.Context(), alice))
	assert.Equal(t, 12, w.cal.RequestsTo(calendartest.MethodInstances), "events.instances calls")
	direct, err := w.src.Meetings(t.Context(), s, start, at(24*7))
	require.NoError(t, err)
	assert.Len(t, direct, 24)
	assert.Equal(t, show(direct), w.meetings(m, s, start, at(24*7)), "Meetings after 12 series were cut short: as the calendar reads")
}
