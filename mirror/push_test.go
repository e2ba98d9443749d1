package mirror_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/mirror"
)

// pushWorld is a world whose mirror runs with push on: the emulator posts
// notifications over TLS to the mirror's handler, as Google does.
type pushWorld struct {
	*world
	srv    *httptest.Server
	m      *mirror.Mirror
	stop   func()
	mu     sync.Mutex
	cals   []string
	woken  chan string
	opts   mirror.Options
	handle http.Handler
	// changed, if set, hears each sync's changes (Mirror.OnChange).
	changed func(ctx context.Context, calendarID string, ms []meetingbot.Meeting)
	// watches records, for each watch, whether it renewed a live channel
	// (meetingbot.Renewal).
	watches []bool
}

// recordingPush is the Calendar client's Push, recording each watch.
type recordingPush struct {
	mirror.Push
	p *pushWorld
}

func (r recordingPush) Watch(ctx context.Context, calendarID, channelID, token, address string, ttl time.Duration) (meetingbot.PushChannel, error) {
	r.p.mu.Lock()
	r.p.watches = append(r.p.watches, meetingbot.Renewal(ctx))
	r.p.mu.Unlock()
	return r.Push.Watch(ctx, calendarID, channelID, token, address, ttl)
}

func newPushWorld(t *testing.T, opts mirror.Options) *pushWorld {
	t.Helper()
	return newPushWorldOn(t, newWorld(t), opts)
}

// newPushWorldHearing is newPushWorld whose mirrors tell changed of each
// sync's changes (Mirror.OnChange).
func newPushWorldHearing(t *testing.T, changed func(ctx context.Context, calendarID string, ms []meetingbot.Meeting)) *pushWorld {
	t.Helper()
	return newPushWorldWith(t, newWorld(t), mirror.Options{}, changed)
}

// newPushWorldOn is newPushWorld on w.
func newPushWorldOn(t *testing.T, w *world, opts mirror.Options) *pushWorld {
	t.Helper()
	return newPushWorldWith(t, w, opts, nil)
}

// newPushWorldWith is newPushWorldOn whose mirrors tell changed, if set,
// of each sync's changes.
func newPushWorldWith(t *testing.T, w *world, opts mirror.Options, changed func(ctx context.Context, calendarID string, ms []meetingbot.Meeting)) *pushWorld {
	t.Helper()
	p := &pushWorld{world: w, cals: []string{alice}, woken: make(chan string, 100), opts: opts, changed: changed}
	p.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.world.held != nil {
			<-p.world.held
		}
		p.mu.Lock()
		h := p.handle
		p.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	p.cal.AddCalendar(alice)
	p.cal.SetNotifyClient(p.srv.Client())
	p.start()
	t.Cleanup(func() { p.stop() })
	return p
}

// start starts a mirror, as a process does; stop ends it.
func (p *pushWorld) start() {
	opts := p.opts
	opts.Push = recordingPush{p.src, p}
	opts.Address = p.srv.URL + "/google/notify"
	opts.Calendars = func(context.Context) ([]string, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		return append([]string(nil), p.cals...), nil
	}
	p.m = p.mirror(opts)
	p.m.OnWake(func(_ context.Context, cal string) { p.woken <- cal })
	if p.changed != nil {
		p.m.OnChange(p.changed)
	}
	p.mu.Lock()
	p.handle = p.m.Handler()
	p.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.m.Run(ctx)
	}()
	p.stop = func() {
		cancel()
		<-done
	}
	// Run opens the channels first thing.
	require.Eventually(p.t, func() bool { return len(p.cal.Channels()) > 0 }, 5*time.Second, time.Millisecond, "a channel open")
}

// settle waits for the sync and wake-up the channel's first notification
// ("sync") makes, and for mirror.PushGap after it, so that a test starts
// from a quiet mirror whose next notification syncs at once.
func (p *pushWorld) settle() {
	p.t.Helper()
	p.cal.FlushNotifications()
	p.wake()
	for len(p.woken) > 0 {
		<-p.woken
	}
	p.clock.Advance(mirror.PushGap)
}

// wake waits for the scheduler's wake-up of a calendar.
func (p *pushWorld) wake() (string, time.Duration) {
	p.t.Helper()
	began := time.Now()
	select {
	case cal := <-p.woken:
		return cal, time.Since(began)
	case <-time.After(5 * time.Second):
		p.t.Fatal("no wake-up within 5s")
		return "", 0
	}
}

// A change pushed by the emulator is synced into the mirror and the
// scheduler woken within a second, without waiting for the resync.
func TestNotificationSyncsAndWakes(t *testing.T) {
	p := newPushWorld(t, mirror.Options{})
	s := sub("alice", alice)
	p.settle()
	assert.Empty(t, p.meetings(p.m, s, start, at(24)), "Meetings before any change")
	lists := p.lists()

	changed := time.Now()
	p.put("a", at(1))
	cal, _ := p.wake()
	assert.Equal(t, alice, cal, "calendar woken")
	assert.Less(t, time.Since(changed), time.Second, "from the change to the wake-up")
	assert.Equal(t, []string{"a 09:00"}, p.meetings(p.m, s, start, at(24)), "Meetings after the notification, within the resync interval")
	assert.Equal(t, lists+1, p.lists(), "events.list calls: one incremental sync")
	assert.GreaterOrEqual(t, p.obs.notified["accepted"], 2, "notifications accepted (sync, exists)")
	assert.Equal(t, 1, len(p.cal.Channels()), "channels open")
}

// A notification with a forged token, of an unknown channel, with a bad
// state or not a POST is refused with a 4xx and changes nothing.
func TestForgedNotificationsChangeNothing(t *testing.T) {
	p := newPushWorld(t, mirror.Options{})
	p.settle()
	ch := p.cal.Channels()[0]
	lists := p.lists()
	header := func(id, token, state string) http.Header {
		return http.Header{
			"X-Goog-Channel-Id":     {id},
			"X-Goog-Channel-Token":  {token},
			"X-Goog-Resource-Id":    {ch.ResourceID},
			"X-Goog-Resource-State": {state},
			"X-Goog-Message-Number": {"7"},
		}
	}
	tests := []struct {
		name   string
		method string
		h      http.Header
		status int
		reason string
	}{
		{"forged token", http.MethodPost, header(ch.ID, "guessed", "exists"), http.StatusForbidden, "token"},
		{"unknown channel", http.MethodPost, header("not-ours", "guessed", "exists"), http.StatusForbidden, "channel"},
		{"no headers", http.MethodPost, http.Header{}, http.StatusForbidden, "channel"},
		{"bad state", http.MethodPost, header(ch.ID, "", "exists"), http.StatusForbidden, "token"},
		{"GET", http.MethodGet, header(ch.ID, "guessed", "exists"), http.StatusMethodNotAllowed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, p.srv.URL+"/google/notify", strings.NewReader(""))
			require.NoError(t, err)
			req.Header = tt.h
			resp, err := p.srv.Client().Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, tt.status, resp.StatusCode, "status")
			if tt.reason != "" {
				p.obs.mu.Lock()
				assert.Positive(t, p.obs.notified[tt.reason], "refusals for %s", tt.reason)
				p.obs.mu.Unlock()
			}
		})
	}
	time.Sleep(200 * time.Millisecond) // a sync would have started by now
	assert.Empty(t, p.woken, "wake-ups after refused notifications")
	assert.Equal(t, lists, p.lists(), "events.list calls after refused notifications")
}

// A channel is replaced before it expires: a new one opens, the old one
// is stopped, and the store keeps only the new one.
func TestChannelRenewedBeforeItExpires(t *testing.T) {
	p := newPushWorld(t, mirror.Options{ChannelTTL: 3 * time.Hour, RenewBefore: time.Hour, Maintain: time.Minute})
	first := p.cal.Channels()
	require.Len(t, first, 1)
	assert.Equal(t, start.Add(3*time.Hour), first[0].Expiration, "the channel's expiration")

	p.settle()
	p.clock.Advance(2 * time.Hour)
	require.Eventually(t, func() bool {
		p.clock.Advance(time.Minute) // Run's maintenance runs on the fake clock
		chs := p.cal.Channels()
		kept, err := p.store.Channels(t.Context())
		require.NoError(t, err)
		return len(chs) == 1 && chs[0].ID != first[0].ID && len(kept) == 1 && kept[0].ID == chs[0].ID
	}, 5*time.Second, 10*time.Millisecond, "one channel open and kept, a new one")
	assert.GreaterOrEqual(t, p.cal.RequestsTo(calendartest.MethodStop), 1, "channels.stop calls")
	p.mu.Lock()
	defer p.mu.Unlock()
	assert.Equal(t, []bool{false, true}, p.watches[:2], "watches: the first opening, then a renewal, counted apart")
}

// A calendar no longer subscribed has its channel stopped and its mirror
// dropped.
func TestChannelStoppedWhenTheSubscriptionGoes(t *testing.T) {
	p := newPushWorld(t, mirror.Options{Maintain: time.Minute})
	p.settle()
	p.meetings(p.m, sub("alice", alice), start, at(24))
	p.mu.Lock()
	p.cals = nil
	p.mu.Unlock()
	require.Eventually(t, func() bool {
		p.clock.Advance(time.Minute)
		return len(p.cal.Channels()) == 0
	}, 5*time.Second, 10*time.Millisecond, "channels open")
	assert.Equal(t, 1, p.cal.RequestsTo(calendartest.MethodStop), "channels.stop calls")
	require.Eventually(t, func() bool {
		kept, err := p.store.Channels(t.Context())
		require.NoError(t, err)
		cals, err := p.store.MirroredCalendars(t.Context())
		require.NoError(t, err)
		return len(kept) == 0 && len(cals) == 0
	}, 5*time.Second, time.Millisecond, "channels and mirrors kept")
}

// A restart reuses the live channel the store keeps: no new watch, and
// its notifications are still verified.
func TestRestartReusesTheChannel(t *testing.T) {
	p := newPushWorld(t, mirror.Options{})
	p.settle()
	watches := p.cal.RequestsTo(calendartest.MethodWatch)
	p.stop()
	p.start()
	time.Sleep(100 * time.Millisecond) // Run's first maintenance
	assert.Equal(t, watches, p.cal.RequestsTo(calendartest.MethodWatch), "events.watch calls after a restart")
	assert.Len(t, p.cal.Channels(), 1, "channels open after a restart")
	p.put("a", at(1))
	cal, _ := p.wake()
	assert.Equal(t, alice, cal, "calendar woken by the old channel's notification after a restart")
}

// Notifications coalesce: a burst of 20 during a slow sync of their
// calendar makes one more sync after it, not 20, and push-triggered syncs
// of one calendar start at least mirror.PushGap apart; the last change is
// still planned.
func TestNotificationsCoalesce(t *testing.T) {
	p := newPushWorld(t, mirror.Options{})
	s := sub("alice", alice)
	p.settle()
	lists := p.lists()
	p.cal.SetLatency(200 * time.Millisecond)
	for i := range 20 {
		p.put(fmt.Sprintf("e%02d", i), at(1))
		time.Sleep(5 * time.Millisecond)
	}
	p.cal.FlushNotifications()
	p.wake()
	require.Never(t, func() bool { return p.lists() > lists+1 }, 500*time.Millisecond, 10*time.Millisecond,
		"events.list calls for 20 notifications during a sync, within the gap")

	p.clock.Advance(mirror.PushGap)
	p.wake()
	assert.Equal(t, lists+2, p.lists(), "events.list calls once the gap has passed: the burst's one sync after the first")
	assert.Len(t, p.meetings(p.m, s, start, at(24)), 20, "meetings mirrored after the burst")
	require.Never(t, func() bool { return p.lists() > lists+2 || len(p.woken) > 0 }, 300*time.Millisecond, 10*time.Millisecond,
		"nothing more once the burst is synced")
}

// A notification whose X-Goog-Message-Number is not above the last one of
// its channel (a replay of a captured one) changes nothing; one above it
// syncs.
func TestReplayedMessageNumberChangesNothing(t *testing.T) {
	p := newPushWorld(t, mirror.Options{})
	p.settle()
	chs, err := p.store.Channels(t.Context())
	require.NoError(t, err)
	require.Len(t, chs, 1)
	ch := chs[0]
	post := func(number string) int {
		req, err := http.NewRequest(http.MethodPost, p.srv.URL+"/google/notify", http.NoBody)
		require.NoError(t, err)
		req.Header = http.Header{
			"X-Goog-Channel-Id": {ch.ID}, "X-Goog-Channel-Token": {ch.Token}, "X-Goog-Resource-Id": {ch.ResourceID},
			"X-Goog-Resource-State": {"exists"}, "X-Goog-Message-Number": {number},
		}
		resp, err := p.srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	p.put("a", at(1))
	p.wake()
	lists := p.lists()
	for _, n := range []string{"1", "2"} { // the sync message and the change's, seen already
		assert.Equal(t, http.StatusOK, post(n), "a replay of message %s is answered as Google expects", n)
	}
	require.Never(t, func() bool { return p.lists() > lists || len(p.woken) > 0 }, 300*time.Millisecond, 10*time.Millisecond,
		"syncs after replayed notifications")
	p.obs.mu.Lock()
	assert.Equal(t, 2, p.obs.notified["replayed"], "replays counted")
	p.obs.mu.Unlock()

	p.clock.Advance(mirror.PushGap)
	assert.Equal(t, http.StatusOK, post("9"))
	p.wake()
	assert.Equal(t, lists+1, p.lists(), "a notification numbered above the last one syncs")
}

// A change pushed by the emulator reaches the OnChange hooks with the sync
// the notification makes, before the scheduler is woken.
func TestNotificationTellsChanged(t *testing.T) {
	var c changes
	p := newPushWorldHearing(t, c.changed)
	p.settle()
	c.take()

	p.put("a", at(1))
	p.wake()
	assert.Equal(t, []string{alice + ": [a 09:00]"}, c.take(), "Changed after the notification's sync")
}

// With push, a calendar whose channel is live is resynced every
// Options.Resync, and one without a live channel every Options.Unwatched:
// its watch refused, or its channel expired without a renewal. A change
// whose notification is lost is seen at the live calendar's next resync.
func TestResyncFollowsTheChannel(t *testing.T) {
	const bob = "bob@example.com"
	p := newPushWorld(t, mirror.Options{Resync: 30 * time.Minute, Tick: 30 * time.Second, ChannelTTL: 3 * time.Hour, RenewBefore: time.Hour})
	refused := func() []calendartest.Fault {
		fs := make([]calendartest.Fault, 500)
		for i := range fs {
			fs[i] = calendartest.Forbidden
		}
		return fs
	}
	p.cal.AddCalendar(bob)
	p.cal.QueueWatchFaults(bob, refused()...)
	p.mu.Lock()
	p.cals = append(p.cals, bob)
	p.mu.Unlock()
	p.settle()
	a, b := sub("alice", alice), sub("bob", bob)
	// sweep sweeps both subscriptions every 30 s up to until, and returns
	// how many times each calendar was synced.
	sweep := func(until time.Duration, after func(at time.Duration)) (alices, bobs int) {
		for p.clock.Now().Before(start.Add(until)) {
			p.clock.Advance(30 * time.Second)
			before := p.lists()
			p.meetings(p.m, a, start, at(24))
			if p.lists() > before {
				alices++
			}
			before = p.lists()
			p.meetings(p.m, b, start, at(24))
			if p.lists() > before {
				bobs++
			}
			if after != nil {
				after(p.clock.Now().Sub(start))
			}
		}
		return alices, bobs
	}
	p.clock.Set(start)
	p.meetings(p.m, a, start, at(24))
	p.meetings(p.m, b, start, at(24))

	// A change at 00:10 whose notification is lost.
	p.clock.Set(start.Add(10 * time.Minute))
	p.cal.DropNotifications(alice, 1)
	p.put("lost", at(5))
	var seen time.Duration
	alices, bobs := sweep(2*time.Hour, func(at time.Duration) {
		if seen == 0 && len(p.meetings(p.m, a, start, start.Add(24*time.Hour))) > 0 {
			seen = at
		}
	})
	assert.Equal(t, 30*time.Minute, seen, "when the change with the lost notification is seen")
	assert.Equal(t, 4, alices, "syncs of the calendar with a live channel over its first 2 hours")
	assert.Equal(t, 22, bobs, "syncs of the calendar whose watch is refused from 00:10 to 02:00")

	// Alice's channel cannot be renewed: it ends at 03:00.
	p.cal.QueueWatchFaults(alice, refused()...)
	alices, _ = sweep(3*time.Hour, nil)
	assert.Equal(t, 2, alices, "syncs while the channel not renewed is still live, to its end at 03:00")
	alices, bobs = sweep(4*time.Hour, nil)
	assert.Equal(t, 12, alices, "syncs in the hour after the channel ended")
	assert.Equal(t, 12, bobs, "syncs of the calendar without a channel in that hour")
}

// urgencies records the urgency of each sync the mirror asks for.
type urgencies struct {
	mirror.Calendar
	mu  sync.Mutex
	got []time.Time // zero: none
}

func (u *urgencies) Sync(ctx context.Context, calendarID, token string, from, horizon time.Time) (meetingbot.Synced, error) {
	at, _ := meetingbot.Urgency(ctx)
	u.mu.Lock()
	u.got = append(u.got, at)
	u.mu.Unlock()
	return u.Calendar.Sync(ctx, calendarID, token, from, horizon)
}

func (u *urgencies) last() time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.got[len(u.got)-1]
}

// The sync a notification asks for is as urgent as a call needed at the
// notification's arrival, so that a quota short of every call serves it
// before the checks of reminders still to come; without an urgency it
// came after all of them.
func TestNotificationSyncIsUrgent(t *testing.T) {
	u := &urgencies{}
	w := newWorld(t)
	w.wrap = func(c mirror.Calendar) mirror.Calendar { u.Calendar = c; return u }
	p := newPushWorldOn(t, w, mirror.Options{})
	p.settle()
	p.clock.Set(start.Add(time.Minute))
	p.put("a", at(1))
	p.wake()
	assert.Equal(t, start.Add(time.Minute), u.last(), "urgency of the notification's sync")
}

// Two replicas keep a channel each on the calendars they hold, not one
// each on every calendar; one that learns what it holds opens their
// channels at once (MaintainNow), not at its next maintenance.
func TestReplicasWatchTheCalendarsTheyHold(t *testing.T) {
	const bob = "bob@example.com"
	p := newPushWorld(t, mirror.Options{Watch: func(c string) bool { return c == alice }})
	p.cal.AddCalendar(bob)
	p.mu.Lock()
	p.cals = append(p.cals, bob)
	p.mu.Unlock()

	var mu sync.Mutex
	known := false // the second replica's share, not known yet
	other := p.mirror(mirror.Options{
		Push: p.src, Address: p.srv.URL + "/google/notify",
		Calendars: func(context.Context) ([]string, error) { return []string{alice, bob}, nil },
		Watch: func(c string) bool {
			mu.Lock()
			defer mu.Unlock()
			return known && c == bob
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		other.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	require.Never(t, func() bool { return len(p.cal.Channels()) > 1 }, 200*time.Millisecond, 10*time.Millisecond,
		"channels before the second replica knows what it holds")

	mu.Lock()
	known = true
	mu.Unlock()
	other.MaintainNow()
	require.Eventually(t, func() bool { return len(p.cal.Channels()) == 2 }, 5*time.Second, 10*time.Millisecond,
		"a channel on each calendar, the clock unmoved")
	for range 3 {
		p.clock.Advance(time.Minute) // both replicas' maintenance
		time.Sleep(50 * time.Millisecond)
	}
	chs := p.cal.Channels()
	require.Len(t, chs, 2, "channels open")
	assert.NotEqual(t, chs[0].CalendarID, chs[1].CalendarID, "one channel on each calendar")
	assert.Equal(t, 2, p.cal.RequestsTo(calendartest.MethodWatch), "events.watch calls of both replicas")
	assert.Zero(t, p.cal.RequestsTo(calendartest.MethodStop), "channels.stop calls")
}

// A new channel's first notification syncs its calendar unless a sync
// that started after its watch was sent covers it: the calendar's first
// sync, at start-up, usually does, and 10,000 calendars then cost 10,000
// syncs the fewer. A change notified after that sync still syncs.
func TestFirstNotificationCoveredByASyncAfterTheWatch(t *testing.T) {
	w := newWorld(t)
	w.held = make(chan struct{})
	p := newPushWorldOn(t, w, mirror.Options{})
	s := sub("alice", alice)
	p.meetings(p.m, s, start, at(24)) // the first sync, after the watch was sent
	lists := p.lists()
	close(w.held) // the channel's first notification ("sync") arrives now
	p.cal.FlushNotifications()
	require.Never(t, func() bool { return p.lists() > lists || len(p.woken) > 0 }, 300*time.Millisecond, 10*time.Millisecond,
		"a sync for the first notification, when the first sync came after the watch")
	p.obs.mu.Lock()
	assert.Equal(t, 1, p.obs.notified["accepted"], "the first notification accepted")
	p.obs.mu.Unlock()

	p.clock.Advance(mirror.PushGap)
	p.put("a", at(1))
	cal, _ := p.wake()
	assert.Equal(t, alice, cal, "calendar woken by a change")
	assert.Equal(t, lists+1, p.lists(), "events.list calls: one for the change")
	assert.Equal(t, []string{"a 09:00"}, p.meetings(p.m, s, start, at(24)))
}

// A notification whose sync fails (an outage, a refusal) leaves its
// change to the calendar's next sweep, not to its resync half an hour on:
// in a simulated day, two meetings created during a Calendar outage for a
// few minutes later were missed at a 30-minute resync.
func TestFailedNotificationSyncIsTheNextSweeps(t *testing.T) {
	p := newPushWorld(t, mirror.Options{Resync: 30 * time.Minute, Tick: 30 * time.Second})
	s := sub("alice", alice)
	p.settle()
	assert.Empty(t, p.meetings(p.m, s, start, at(24)), "Meetings before any change")
	lists := p.lists()

	p.cal.QueueFaults(alice, calendartest.Forbidden) // the notification's sync fails
	p.put("a", at(1))
	p.cal.FlushNotifications()
	require.Eventually(t, func() bool { return p.lists() > lists }, 5*time.Second, time.Millisecond, "the notification's sync")
	time.Sleep(50 * time.Millisecond) // its failure noted

	p.clock.Advance(30 * time.Second)
	assert.Equal(t, []string{"a 09:00"}, p.meetings(p.m, s, start, at(24)), "the next sweep, 30 s later")
	assert.Equal(t, lists+2, p.lists(), "events.list calls: the failed sync and the sweep's")
	p.clock.Advance(30 * time.Second)
	p.meetings(p.m, s, start, at(24))
	assert.Equal(t, lists+2, p.lists(), "events.list calls once the sweep's sync succeeded")
}

// stopRecorder is a Push that records the channels stopped.
type stopRecorder struct {
	mirror.Push
	mu      sync.Mutex
	stopped []string
}

func (s *stopRecorder) StopChannel(_ context.Context, ch meetingbot.PushChannel) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = append(s.stopped, ch.ID)
	return nil
}

// A person disconnecting stops the channels their account opened, while
// it still can, and only those: the channel the bot's credentials opened
// on the same calendar (for a subscription someone else made of it) is
// the bot's to stop, and stays.
func TestDisconnectStopsTheChannelsItsAccountOpened(t *testing.T) {
	w := newWorld(t)
	push := &stopRecorder{Push: w.src}
	m := w.mirror(mirror.Options{Push: push, Address: "https://bot.example.com/google/notify", Calendars: func(context.Context) ([]string, error) { return nil, nil }})
	exp := start.Add(time.Hour)
	for _, ch := range []meetingbot.PushChannel{
		{ID: "hers", CalendarID: meetingbot.ReadAs("Alice@example.com", "U1"), Opener: meetingbot.ReadAs("Alice@example.com", "U1"), Token: "t", ResourceID: "r1", Expiration: exp},
		{ID: "bots", CalendarID: "Alice@example.com", Token: "t", ResourceID: "r2", Expiration: exp},
		{ID: "bobs", CalendarID: meetingbot.ReadAs("bob@example.com", "U2"), Opener: meetingbot.ReadAs("bob@example.com", "U2"), Token: "t", ResourceID: "r3", Expiration: exp},
	} {
		require.NoError(t, w.store.PutChannel(t.Context(), ch))
	}

	m.StopChannels(t.Context(), "alice@example.com")

	assert.Equal(t, []string{"hers"}, push.stopped, "channels stopped")
	kept, err := w.store.Channels(t.Context())
	require.NoError(t, err)
	var ids []string
	for _, ch := range kept {
		ids = append(ids, ch.ID)
	}
	assert.ElementsMatch(t, []string{"bots", "bobs"}, ids, "channels kept")
}
