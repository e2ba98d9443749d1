package mirror_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	gcal "google.golang.org/api/calendar/v3"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/mirror"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

const alice = "alice@example.com"

var start = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

func at(h int) time.Time { return start.Add(time.Duration(h) * time.Hour) }

// observed counts what the mirror reports.
type observed struct {
	mu       sync.Mutex
	syncs    map[string]int
	notified map[string]int
	open     int
	rounds   int // ChannelsOpen calls: maintenance rounds ended
}

func (o *observed) Synced(kind string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.syncs[kind]++
}

func (o *observed) Notified(outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.notified[outcome]++
}

func (o *observed) ChannelsOpen(n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.open = n
	o.rounds++
}

func (o *observed) roundsDone() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.rounds
}

func (o *observed) get(kind string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.syncs[kind]
}

// world is the emulator, a real Calendar client on it, a SQLite store and
// a fake clock.
type world struct {
	t     *testing.T
	cal   *calendartest.Server
	src   calendar.Mirrored
	store *sqlite.Store
	clock *clock.Fake
	obs   *observed
	// wrap, if set, stands between the mirror and the Calendar client.
	wrap func(mirror.Calendar) mirror.Calendar
	// held, if set, holds the notifications a push world's mirror is
	// posted until it is closed.
	held chan struct{}
}

func newWorld(t *testing.T) *world {
	t.Helper()
	cal := calendartest.NewServer()
	t.Cleanup(cal.Close)
	path := filepath.Join(t.TempDir(), "key.json")
	require.NoError(t, os.WriteFile(path, cal.ServiceAccountJSON(), 0o600))
	src, err := calendar.New(context.Background(), calendar.Config{CredentialsFile: path, Endpoint: cal.Endpoint(), HTTPClient: cal.Client()})
	require.NoError(t, err)
	store, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "bot.db"))
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	w := &world{t: t, cal: cal, src: calendar.Mirrored{Source: src}, store: store, clock: clock.NewFake(start),
		obs: &observed{syncs: map[string]int{}, notified: map[string]int{}}}
	cal.SetClock(w.clock.Now)
	return w
}

func (w *world) mirror(opts mirror.Options) *mirror.Mirror {
	w.t.Helper()
	opts.Clock, opts.Observer = w.clock, w.obs
	if opts.Resync == 0 {
		opts.Resync = 5 * time.Minute
	}
	var cal mirror.Calendar = w.src
	if w.wrap != nil {
		cal = w.wrap(cal)
	}
	m, err := mirror.New(cal, w.store, opts)
	require.NoError(w.t, err)
	return m
}

func (w *world) put(id string, s time.Time) {
	w.t.Helper()
	require.NoError(w.t, w.cal.Put(alice, calendartest.NewEvent(id, "Meeting "+id, s, s.Add(time.Hour))))
}

func sub(id, cal string) meetingbot.Subscription {
	return meetingbot.Subscription{ID: id, CalendarID: cal, Offsets: []time.Duration{10 * time.Minute}}
}

// show lists meetings as "id hh:mm".
func show(ms []meetingbot.Meeting) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ID+" "+m.Start.UTC().Format("15:04"))
	}
	return out
}

func (w *world) meetings(m *mirror.Mirror, s meetingbot.Subscription, from, to time.Time) []string {
	w.t.Helper()
	ms, err := m.Meetings(w.t.Context(), s, from, to)
	require.NoError(w.t, err, "Meetings(%s)", s.ID)
	return show(ms)
}

func (w *world) lists() int { return w.cal.RequestsTo("events.list") }

// The first read syncs in full; reads within the resync interval cost no
// call; the next one asks only for the changes: a move, a deletion, a new
// meeting.
func TestFirstSyncThenChanges(t *testing.T) {
	w := newWorld(t)
	w.put("a", at(1))
	w.put("b", at(2))
	w.put("far", at(24*10))
	m := w.mirror(mirror.Options{})
	s := sub("alice", alice)

	assert.Equal(t, []string{"a 09:00", "b 10:00"}, w.meetings(m, s, start, at(24)), "Meetings after the first sync")
	assert.Equal(t, 1, w.lists(), "events.list calls after the first read")
	assert.Equal(t, []string{"b 10:00"}, w.meetings(m, s, at(1), at(3)), "Meetings((09:00, 11:00])")

	w.put("a", at(5)) // moved
	require.NoError(t, w.cal.Delete(alice, "b"))
	w.put("c", at(3))
	w.clock.Advance(time.Minute)
	assert.Equal(t, []string{"a 09:00", "b 10:00"}, w.meetings(m, s, start, at(24)), "Meetings a minute later: the mirror, unsynced")
	assert.Equal(t, 1, w.lists(), "events.list calls within the resync interval")

	w.clock.Advance(5 * time.Minute)
	assert.Equal(t, []string{"c 11:00", "a 13:00"}, w.meetings(m, s, start, at(24)), "Meetings after the resync interval")
	assert.Equal(t, 2, w.lists(), "events.list calls after the resync interval")
	assert.Equal(t, "", w.cal.LastQuery(alice).Get("timeMin"), "the incremental sync's timeMin")
	assert.NotEmpty(t, w.cal.LastQuery(alice).Get("syncToken"), "the incremental sync's syncToken")
	assert.Equal(t, 1, w.obs.get("full"), "full syncs")
	assert.Equal(t, 1, w.obs.get("incremental"), "incremental syncs")

	// A restart finds the mirror and its token.
	again := w.mirror(mirror.Options{})
	assert.Equal(t, []string{"c 11:00", "a 13:00"}, w.meetings(again, s, start, at(24)), "Meetings after a restart")
	assert.Equal(t, 2, w.lists(), "events.list calls after a restart within the resync interval")
}

// Subscriptions of one calendar share its mirror: one sync serves both.
func TestSubscriptionsShareACalendar(t *testing.T) {
	w := newWorld(t)
	w.put("a", at(1))
	m := w.mirror(mirror.Options{})
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			ms, err := m.Meetings(t.Context(), sub(fmt.Sprint("s", i), alice), start, at(24))
			assert.NoError(t, err)
			assert.Equal(t, []string{"a 09:00"}, show(ms))
		})
	}
	wg.Wait()
	assert.Equal(t, 1, w.lists(), "events.list calls for 10 subscriptions of one calendar")
}

// A token Google no longer accepts clears the mirror and syncs in full:
// what changed meanwhile is there, what was deleted is gone.
func TestTokenGoneSyncsInFull(t *testing.T) {
	w := newWorld(t)
	w.put("a", at(1))
	w.put("b", at(2))
	m := w.mirror(mirror.Options{})
	s := sub("alice", alice)
	w.meetings(m, s, start, at(24))
	w.cal.ExpireSyncTokens(alice)
	require.NoError(t, w.cal.Delete(alice, "a"))
	w.put("c", at(3))

	require.NoError(t, m.Sync(t.Context(), alice))
	assert.Equal(t, []string{"b 10:00", "c 11:00"}, w.meetings(m, s, start, at(24)), "Meetings after a 410")
	assert.Equal(t, 1, w.obs.get("gone"), "410s")
	assert.Equal(t, 2, w.obs.get("full"), "full syncs")
	assert.Equal(t, 3, w.lists(), "events.list calls: full, 410, full")
}

// Every page of a sync is read, full and incremental.
func TestSyncFollowsPages(t *testing.T) {
	w := newWorld(t)
	for i := range 7 {
		w.put(fmt.Sprint("ev", i), at(i+1))
	}
	w.cal.SetPageSize(2)
	m := w.mirror(mirror.Options{})
	s := sub("alice", alice)
	assert.Len(t, w.meetings(m, s, start, at(24)), 7, "Meetings after a full sync of 4 pages")
	for i := range 5 {
		w.put(fmt.Sprint("ev", i), at(i+10))
	}
	require.NoError(t, m.Sync(t.Context(), alice))
	got := w.meetings(m, s, start, at(24))
	assert.Equal(t, []string{"ev5 14:00", "ev6 15:00", "ev0 18:00", "ev1 19:00", "ev2 20:00", "ev3 21:00", "ev4 22:00"}, got, "Meetings after an incremental sync of 3 pages")
}

// A daily series without an end stays bounded by the window, which a full
// sync a day refills; a read beyond it goes to the calendar.
func TestSeriesWithoutEndStaysBounded(t *testing.T) {
	w := newWorld(t)
	ev := calendartest.NewEvent("standup", "Standup", at(1), at(1).Add(15*time.Minute))
	ev.Recurrence = []string{"RRULE:FREQ=DAILY"}
	require.NoError(t, w.cal.Put(alice, ev))
	m := w.mirror(mirror.Options{})
	s := sub("alice", alice)
	ms, err := m.Meetings(t.Context(), s, start, at(24*8))
	require.NoError(t, err)
	assert.Len(t, ms, 8, "instances of a daily series in the 8-day window")
	var all []meetingbot.Meeting
	all, err = w.store.Mirrored(t.Context(), alice, start.Add(-time.Hour*24*365), start.Add(24*365*time.Hour))
	require.NoError(t, err)
	assert.Len(t, all, 8, "instances the mirror holds")

	// A change of the series lists its instances without end; those beyond
	// the horizon do not enter the mirror.
	ev.Summary = "Standup (renamed)"
	require.NoError(t, w.cal.Put(alice, ev))
	require.NoError(t, m.Sync(t.Context(), alice))
	all, err = w.store.Mirrored(t.Context(), alice, start.Add(-time.Hour*24*365), start.Add(24*365*time.Hour))
	require.NoError(t, err)
	assert.Len(t, all, 8, "instances the mirror holds after the series changed")

	// A day on, the full sync moves the window.
	w.clock.Advance(24 * time.Hour)
	lists := w.lists()
	ms, err = m.Meetings(t.Context(), s, w.clock.Now(), w.clock.Now().Add(7*24*time.Hour))
	require.NoError(t, err)
	assert.Len(t, ms, 7, "instances in the next 7 days, a day later")
	assert.Equal(t, lists+1, w.lists(), "events.list calls for the daily full sync")
	assert.Equal(t, "2026-11-30T07:00:00Z", w.cal.LastQuery(alice).Get("timeMin"), "the daily full sync's timeMin (25h back)")
}

// A series split "this and following" (and moved) shows in the mirror as
// reading the calendar shows it: the old series cut, the new one's
// instances in its place.
func TestSplitSeries(t *testing.T) {
	w := newWorld(t)
	ev := calendartest.NewEvent("standup", "Standup", at(1).AddDate(0, 0, -7), at(1).AddDate(0, 0, -7).Add(15*time.Minute))
	ev.Recurrence = []string{"RRULE:FREQ=DAILY;COUNT=20"}
	require.NoError(t, w.cal.Put(alice, ev))
	m := w.mirror(mirror.Options{})
	s := sub("alice", alice)
	before, err := m.Meetings(t.Context(), s, start, at(24*3))
	require.NoError(t, err)
	require.Len(t, before, 3)

	tomorrow := before[1]
	_, err = w.cal.SplitFollowing(alice, tomorrow.ID, func(e *gcal.Event) {
		e.Summary = "Standup (later)"
		e.Start.DateTime = tomorrow.Start.Add(30 * time.Minute).Format(time.RFC3339)
		e.End.DateTime = tomorrow.Start.Add(45 * time.Minute).Format(time.RFC3339)
	})
	require.NoError(t, err)
	require.NoError(t, m.Sync(t.Context(), alice))
	after, err := m.Meetings(t.Context(), s, start, at(24*3))
	require.NoError(t, err)
	direct, err := w.src.Meetings(t.Context(), s, start, at(24*3))
	require.NoError(t, err)
	assert.Equal(t, direct, after, "Meetings after the split: as the calendar reads")
	var got []string
	for _, x := range after {
		got = append(got, x.Title+" "+x.Start.Format("Jan 2 15:04"))
	}
	assert.Equal(t, []string{"Standup Nov 30 09:00", "Standup (later) Dec 1 09:30", "Standup (later) Dec 2 09:30"}, got, "Meetings after the split")
	assert.False(t, slices.ContainsFunc(after[1:], func(x meetingbot.Meeting) bool { return x.ID == tomorrow.ID }), "the old instance IDs after the split are gone")
}

// A sync that changed nothing keeps its new token and time in memory and
// writes them only every mirror.SaveEvery; a sync with changes writes at
// once. Another mirror on the store (a restart, a replica) syncs from the
// token written, and a sync of its own supersedes what the first kept.
func TestSyncsThatChangeNothingAreSavedEveryTenMinutes(t *testing.T) {
	w := newWorld(t)
	w.put("a", at(1))
	m := w.mirror(mirror.Options{})
	s := sub("alice", alice)
	saved := func() meetingbot.CalendarSync {
		st, ok, err := w.store.CalendarSync(t.Context(), alice)
		require.NoError(t, err)
		require.True(t, ok)
		return st
	}
	w.meetings(m, s, start, at(24))
	first := saved()

	w.clock.Advance(5 * time.Minute)
	require.NoError(t, m.Sync(t.Context(), alice))
	assert.Equal(t, first, saved(), "the store after a sync that changed nothing")
	for range 4 {
		w.clock.Advance(time.Minute)
		w.meetings(m, s, start, at(24))
	}
	assert.Equal(t, 2, w.lists(), "events.list calls: reads up to 4 minutes after the sync kept in memory, within the resync interval")

	w.clock.Advance(2 * time.Minute) // 11 minutes after the saved sync
	require.NoError(t, m.Sync(t.Context(), alice))
	assert.Equal(t, w.clock.Now().UTC(), saved().SyncedAt, "saved once SaveEvery has passed")

	w.clock.Advance(time.Minute)
	require.NoError(t, m.Sync(t.Context(), alice)) // kept in memory
	w.put("b", at(2))
	other := w.mirror(mirror.Options{})
	require.NoError(t, other.Sync(t.Context(), alice)) // from the saved token: sees b, and writes
	assert.Equal(t, []string{"a 09:00", "b 10:00"}, w.meetings(other, s, start, at(24)))

	w.put("c", at(3))
	w.clock.Advance(6 * time.Minute)
	assert.Equal(t, []string{"a 09:00", "b 10:00", "c 11:00"}, w.meetings(m, s, start, at(24)),
		"the first mirror, after the other's sync: from the token the other wrote")
	assert.Zero(t, w.obs.get("gone"), "410s")
}

// With nothing changing, a calendar swept every tick is synced once per
// resync interval, not once per interval less a tick; a second
// subscription sweeping it at another phase adds no sync; and without
// push, where the interval is the tick, it is synced once a tick however
// many subscriptions sweep it.
func TestIdleCalendarSyncsOncePerInterval(t *testing.T) {
	for _, c := range []struct {
		name   string
		resync time.Duration
		phases []time.Duration // of each subscription's sweeps within a tick
		ticks  int             // sweeps of each subscription
		want   int             // incremental syncs over them
	}{
		{"push, one subscription", 5 * time.Minute, []time.Duration{0}, 120, 12},
		{"push, two subscriptions", 5 * time.Minute, []time.Duration{0, 17 * time.Second}, 120, 12},
		// Fewer sweeps: the client's per-user quota (600 a minute) spaces calls.
		{"no push, one subscription", 30 * time.Second, []time.Duration{0}, 20, 20},
		{"no push, three subscriptions", 30 * time.Second, []time.Duration{0, 10 * time.Second, 20 * time.Second}, 20, 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.put("a", at(3))
			m := w.mirror(mirror.Options{Resync: c.resync, Tick: 30 * time.Second})
			subs := make([]meetingbot.Subscription, len(c.phases))
			for i := range subs {
				subs[i] = sub(fmt.Sprint("s", i), alice)
			}
			w.meetings(m, subs[0], start, at(24)) // the full sync
			last := w.clock.Now()
			var longest time.Duration
			for tick := range c.ticks {
				base := start.Add(time.Duration(tick+1) * 30 * time.Second)
				for i, ph := range c.phases {
					w.clock.Set(base.Add(ph))
					before := w.lists()
					w.meetings(m, subs[i], start, at(24))
					if w.lists() > before {
						longest = max(longest, w.clock.Now().Sub(last))
						last = w.clock.Now()
					}
				}
			}
			assert.Equal(t, c.want, w.obs.get("incremental"), "incremental syncs in %d sweeps 30s apart", c.ticks)
			assert.LessOrEqual(t, longest, c.resync+3*time.Second, "the longest time between two syncs")
		})
	}
}

// changes records what a hook registered with OnChange is told.
type changes struct {
	mu   sync.Mutex
	told []string // "calendar: id hh:mm, …" per call
}

func (c *changes) changed(_ context.Context, calendarID string, ms []meetingbot.Meeting) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.told = append(c.told, fmt.Sprint(calendarID, ": ", show(ms)))
}

func (c *changes) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.told
	c.told = nil
	return out
}

// OnChange's hooks are told of what each sync wrote (how a snooze "at start"
// learns that its meeting moved): every meeting of the full sync, then the
// meeting that moved; a sync that finds nothing new tells nothing.
func TestChangedTellsOfTheMeetingsEachSyncWrote(t *testing.T) {
	w := newWorld(t)
	w.put("a", at(1))
	w.put("b", at(2))
	var c changes
	m := w.mirror(mirror.Options{})
	m.OnChange(c.changed)
	s := sub("alice", alice)

	w.meetings(m, s, start, at(24))
	assert.Equal(t, []string{alice + ": [a 09:00 b 10:00]"}, c.take(), "Changed after the full sync")
	w.clock.Advance(6 * time.Minute)
	w.meetings(m, s, start, at(24))
	assert.Empty(t, c.take(), "Changed after a sync that found nothing new")

	w.put("b", at(1).Add(-30*time.Minute)) // moved earlier
	require.NoError(t, m.Sync(t.Context(), alice))
	assert.Equal(t, []string{alice + ": [b 08:30]"}, c.take(), "Changed after the move")
}

// The mirror holds a calendar's out-of-office events, and gives them only
// to the subscription that asks for them (a status with out of office
// on): reminders never see them, synced or read past the mirror's window.
func TestOutOfOfficeOnlyForWhoAsks(t *testing.T) {
	w := newWorld(t)
	w.put("a", at(1))
	away := calendartest.NewEvent("away", "Away", at(2), at(4))
	away.EventType = "outOfOffice"
	require.NoError(t, w.cal.Put(alice, away))
	m := w.mirror(mirror.Options{})
	reminders := sub("alice", alice)
	status := sub("status:U1", alice)
	status.OutOfOffice = true
	for _, to := range []time.Time{at(24), at(24 * 40)} { // within the mirror's window, and past it
		assert.Equal(t, []string{"a 09:00"}, w.meetings(m, reminders, start, to), "reminders' meetings up to %v", to)
		assert.Equal(t, []string{"a 09:00", "away 10:00"}, w.meetings(m, status, start, to), "the status's meetings up to %v", to)
	}
}
