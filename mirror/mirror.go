// Package mirror keeps a mirror of each subscribed calendar's upcoming
// instances in the store and answers the scheduler's sweeps from it, so
// that Calendar calls grow with changes, not with time.
//
// A calendar is synced in full once (the instances of a window, from 25
// hours back to 8 days ahead), then incrementally: each sync asks Google
// only for what changed since the last one (its nextSyncToken), following
// every page; a token Google refuses (410 Gone) clears the mirror and
// syncs it in full again. Cancelled, deleted and declined instances leave
// the mirror; so does an instance moved out of the window, which keeps a
// daily series without an end bounded. The window is refilled by a full
// sync once a day, so that an instance that enters it as time passes,
// without being changed, is there in time (see calendar.Sync).
//
// When does a calendar sync? When a sweep asks for its meetings and its
// last sync is Options.Resync (CALENDAR_RESYNC_INTERVAL) old, give or take
// a tenth of a tick (Options.stale): the
// tick interval without push, which costs what reading the calendar on
// every sweep did, and 30 minutes with push, where a Calendar push
// notification syncs it within a second and wakes the scheduler, so the
// resync only bounds how late a lost notification's change is seen. A
// calendar without a live channel (not open yet, refused, or expired
// without renewal) has no notifications to wait for and is resynced every
// Options.Unwatched, 5 minutes. The
// check just before reminders go out (FreshMeetings) syncs the calendar
// whatever the age of its last sync: as fresh as reading each meeting
// (events.get), one call for all the calendar's reminders due at that
// instant, and it counts as the calendar's resync.
//
// A mirror is of a reading (meetingbot.Subscription.Reading): a calendar
// as one identity reads it, the bot's credentials or a person's own
// connected account. Subscriptions that read a calendar alike share one
// mirror and one channel; a person's token never answers for one they did
// not set up. Below, a calendarID is such a reading, and the store keeps
// mirrors, syncs and channels by it. Each channel remembers who opened it
// (meetingbot.PushChannel.Opener), as Google lets only that identity stop
// it.
//
// The package imports the root's words and declares what it consumes
// (consumes.go); package daemon adapts the calendar package and the stores.
package mirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
)

// Defaults of Options.
const (
	// DefaultAhead is how far ahead of a full sync its window ends: a week
	// of offsets and a day until the next full sync.
	DefaultAhead = 8 * 24 * time.Hour
	// DefaultBehind is how far back a full sync's window starts: the
	// scheduler's catch-up span after a gap (24h) and an hour.
	DefaultBehind = 25 * time.Hour
	// DefaultFullEvery is how often a calendar is synced in full again.
	DefaultFullEvery = 24 * time.Hour
	// DefaultResyncPush is CALENDAR_RESYNC_INTERVAL's default with push
	// on: the safety resync of a calendar whose channel is live. Google
	// calls notifications "not 100% reliable"; one lost delays its change
	// by at most this (or until the calendar's next reminder instant,
	// whose check syncs it), and 48 resyncs a day keep a calendar within
	// the budget of 100 Calendar calls a day (docs/performance.md).
	DefaultResyncPush = 30 * time.Minute
	// DefaultUnwatched is the resync, with push on, of a calendar without
	// a live channel: as often as push was resynced before channels were
	// known to be live, since none of its changes is notified.
	DefaultUnwatched = 5 * time.Minute
	// DefaultRenewBefore is how long before its expiration a channel is
	// replaced by a new one.
	DefaultRenewBefore = time.Hour
	// DefaultMaintain is how often channels are opened, renewed and
	// stopped as the subscriptions change.
	DefaultMaintain = time.Minute
)

// Options tune a Mirror. The zero value of each field picks its default.
type Options struct {
	// Clock tells the time; clock.New() by default.
	Clock clock.Clock
	// Resync is how old a calendar's last sync may be before a sweep's
	// read syncs it again; meetingbot.DefaultTickInterval by default.
	// With push (Address set), it is the resync of a calendar whose
	// channel is live.
	Resync time.Duration
	// Unwatched is, with push, the resync of a calendar without a live
	// channel (none opened yet, the watch refused or failing, or the
	// channel expired without renewal); the lesser of Resync and
	// DefaultUnwatched by default.
	Unwatched time.Duration
	// Tick is how often each subscription is swept (TICK_INTERVAL);
	// meetingbot.DefaultTickInterval by default. See Options.stale.
	Tick time.Duration
	// Ahead, Behind and FullEvery shape the window of a full sync and how
	// often it is refilled.
	Ahead, Behind, FullEvery time.Duration
	// Push opens and stops channels. With Address set (PUBLIC_URL +
	// "/google/notify"), Run opens a channel per calendar whose
	// notifications Google posts there, each ending after ChannelTTL (0:
	// Google's default, a week) and replaced RenewBefore its end. Without
	// Address, Run stops the channels a run with push left (Push, when
	// set, stops them).
	Push                    Push
	Address                 string
	ChannelTTL, RenewBefore time.Duration
	// Calendars returns the calendars subscribed now, of every
	// subscription (not only this replica's share): Run opens channels on
	// them, and stops the channels and drops the mirrors of the others.
	Calendars func(ctx context.Context) ([]string, error)
	// Watch, if set, says whether this replica keeps a subscribed
	// calendar's channel (opens it, renews it, stops its duplicates): the
	// replica that holds the calendar's subscriptions, so that replicas
	// started together do not each open one per calendar. Channels of
	// calendars no longer subscribed are stopped by any replica. Nil:
	// every calendar subscribed (one replica).
	Watch func(calendarID string) bool
	// Maintain is how often Run looks at the channels and the calendars
	// subscribed; DefaultMaintain by default.
	Maintain time.Duration
	// Lead is how long before a trigger a sweep's reading must be ready,
	// the scheduler's FireLead, and how long a sweep's sync may wait for
	// the Calendar quota; 1s by default. See bound.
	Lead time.Duration
	// Logger receives the logs; slog.Default() by default.
	Logger *slog.Logger
	// Observer, if set, is told of syncs, notifications and channels.
	Observer Observer
}

// Mirror is the scheduler's Source over the mirror. Create it with New;
// run its background work (notifications, channels) with Run.
type Mirror struct {
	cal   Calendar
	store Store
	opts  Options
	clock clock.Clock
	log   *slog.Logger

	mu       sync.Mutex
	onWake   []func(ctx context.Context, calendarID string)                               // OnWake
	onChange []func(ctx context.Context, calendarID string, changed []meetingbot.Meeting) // OnChange
	cals     map[string]*calendarState                                                    // per calendar
	channels map[string]meetingbot.PushChannel                                            // by ID: every channel known, the store's and those being opened
	reloaded time.Duration                                                                // on the elapsed clock: when channels were last read from the store
	pending  map[string]bool                                                              // calendars notified and not synced yet
	renewal  map[string]bool                                                              // channels opened to replace a live one, until their first notification
	watched  map[string]time.Time                                                         // by calendar: the latest expiration of its channels opened (zero: none)
	kick     chan struct{}                                                                // wakes Run for pending
	// maintainNow wakes Run for its maintenance (MaintainNow).
	maintainNow chan struct{}
	// opened holds, per channel this process opened (not renewed), when
	// its watch was sent, until its first notification; since holds, per
	// calendar whose pending sync a new channel's first notification
	// asked for, that instant; changeAt, per calendar, when its last
	// notification of a change came. See pushed.
	opened   map[string]time.Time
	since    map[string]time.Time
	changeAt map[string]time.Time
	// dirty holds the calendars whose notification's sync failed: the
	// next sweep syncs them whatever the age of their last sync.
	dirty  map[string]bool
	pushes pushSyncs // the syncs notifications asked for, coalesced

	instancesUnserved atomic.Bool // events.instances answered as a method the server lacks; said once
}

// New returns a Mirror reading cal and keeping the mirror in store.
func New(cal Calendar, store Store, opts Options) (*Mirror, error) {
	if opts.Clock == nil {
		opts.Clock = clock.New()
	}
	opts.Resync = orDefault(opts.Resync, meetingbot.DefaultTickInterval)
	opts.Tick = orDefault(opts.Tick, meetingbot.DefaultTickInterval)
	opts.Unwatched = orDefault(opts.Unwatched, min(opts.Resync, DefaultUnwatched))
	opts.Ahead = orDefault(opts.Ahead, DefaultAhead)
	opts.Behind = orDefault(opts.Behind, DefaultBehind)
	opts.FullEvery = orDefault(opts.FullEvery, DefaultFullEvery)
	opts.RenewBefore = orDefault(opts.RenewBefore, DefaultRenewBefore)
	opts.Maintain = orDefault(opts.Maintain, DefaultMaintain)
	opts.Lead = orDefault(opts.Lead, time.Second)
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Address != "" && (opts.Push == nil || opts.Calendars == nil) {
		return nil, errors.New("mirror: push needs channels and the calendars to watch")
	}
	if opts.ChannelTTL > 0 && opts.ChannelTTL <= opts.RenewBefore {
		return nil, fmt.Errorf("mirror: a channel's life %v must exceed its renewal lead %v", opts.ChannelTTL, opts.RenewBefore)
	}
	return &Mirror{
		cal: cal, store: store, opts: opts, clock: opts.Clock, log: opts.Logger,
		cals: map[string]*calendarState{}, channels: map[string]meetingbot.PushChannel{},
		reloaded: -time.Hour, pending: map[string]bool{}, renewal: map[string]bool{}, watched: map[string]time.Time{},
		kick: make(chan struct{}, 1), maintainNow: make(chan struct{}, 1),
		opened: map[string]time.Time{}, since: map[string]time.Time{}, changeAt: map[string]time.Time{}, dirty: map[string]bool{},
	}, nil
}

func orDefault(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// Meetings returns sub's meetings starting in (from, to] from the mirror
// of its calendar, syncing the calendar first when its last sync is older
// than Options.Resync, or in full when the mirror's window ends before to.
// A range beyond what a full sync holds is read from the calendar itself.
//
// When the sync fails, or cannot end in time (see bound: the quota has no
// place for it, or a retry's backoff would outlast the calendar's next
// trigger), the meetings are the mirror's last reading, returned with a
// *meetingbot.StaleReading that says when it was made and why it is not
// newer: a read that fails must not make the bot forget what it knew.
// Other errors are the Calendar's (a permanent failure, or a calendar the
// mirror holds no reading of) or the store's.
func (m *Mirror) Meetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
	return m.meetings(ctx, sub, from, to, false)
}

// FreshMeetings is Meetings after an incremental sync, whatever the age
// of the last one: the check of the reminders due at one instant, which
// must be as fresh as reading each of them. The sync restarts the
// calendar's resync interval.
func (m *Mirror) FreshMeetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
	return m.meetings(ctx, sub, from, to, true)
}

func (m *Mirror) meetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time, force bool) ([]meetingbot.Meeting, error) {
	// The mirror holds a calendar's out-of-office events too, for the
	// status subscriptions that ask for them; the others never see them.
	ms, err := m.mirrored(ctx, sub, from, to, force)
	return meetingbot.ForSubscription(sub, ms), err
}

func (m *Mirror) mirrored(ctx context.Context, sub meetingbot.Subscription, from, to time.Time, force bool) ([]meetingbot.Meeting, error) {
	var bound func(meetingbot.CalendarSync, bool) (context.Context, context.CancelFunc)
	if !force {
		bound = func(st meetingbot.CalendarSync, full bool) (context.Context, context.CancelFunc) {
			return m.bound(ctx, sub, from, to, st, full)
		}
	}
	st, err := m.synced(ctx, sub.Reading(), to, force, bound)
	if err != nil {
		return m.lastReading(ctx, sub, from, to, err)
	}
	if from.Before(st.From) || to.After(st.Horizon) {
		return m.cal.Meetings(ctx, sub, from, to)
	}
	return m.store.Mirrored(ctx, sub.Reading(), from, to)
}

// staleUrgency is how many resync intervals old a calendar's reading may
// grow, when the quota cannot cover every resync, before its resync is as
// urgent as a reminder due now.
const staleUrgency = 10

// bound returns the context of a sweep's sync of sub's calendar, whose
// last sync st the mirror holds: the mirror answers from it when the sync
// cannot end in time, so the sync must not hold the sweep up. It waits at
// most Lead for the quota (a routine resync does not queue behind the
// reminders' checks), its urgency is the calendar's next trigger (or its
// reading's age), and it ends by that trigger less Lead, so that a retry's
// backoff cannot make a reminder late, and within a tick in any case; never
// sooner than Lead from now.
func (m *Mirror) bound(ctx context.Context, sub meetingbot.Subscription, from, to time.Time, st meetingbot.CalendarSync, full bool) (context.Context, context.CancelFunc) {
	now := m.clock.Now().UTC()
	urgency := st.SyncedAt.Add(staleUrgency * m.resync(sub.Reading()))
	within := m.opts.Tick
	if !from.Before(st.From) && !to.After(st.Horizon) {
		if ms, err := m.store.Mirrored(ctx, sub.Reading(), from, to); err == nil {
			if next, ok := nextTrigger(sub, meetingbot.ForSubscription(sub, ms), now); ok {
				urgency = earlier(urgency, next)
				if !full {
					within = min(within, next.Sub(now)-m.opts.Lead)
				}
			}
		}
	}
	ctx = meetingbot.WithUrgency(meetingbot.WithQuotaWait(ctx, m.opts.Lead), urgency)
	return context.WithTimeout(ctx, max(within, m.opts.Lead))
}

// nextTrigger returns the earliest trigger of sub's meetings ms after now.
func nextTrigger(sub meetingbot.Subscription, ms []meetingbot.Meeting, now time.Time) (time.Time, bool) {
	var next time.Time
	for _, mt := range ms {
		for _, o := range sub.OffsetsFor(mt) {
			if at := mt.Start.Add(-o); at.After(now) && (next.IsZero() || at.Before(next)) {
				next = at
			}
		}
	}
	return next, !next.IsZero()
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// lastReading answers sub's meetings in (from, to] from the reading of
// its calendar the store holds, after err made the sync fail: with a
// *meetingbot.StaleReading beside them, saying when the reading was made
// and why it is not newer. A failure no later read can cure (permanent:
// the calendar unshared, the credentials refused), a stop, or a range the
// reading does not hold gives err alone.
func (m *Mirror) lastReading(ctx context.Context, sub meetingbot.Subscription, from, to time.Time, err error) ([]meetingbot.Meeting, error) {
	if ctx.Err() != nil || meetingbot.IsPermanent(err) {
		return nil, err
	}
	st, ok, serr := m.store.CalendarSync(ctx, sub.Reading())
	if serr != nil || !ok || st.Token == "" || from.Before(st.From) || to.After(st.Horizon) {
		return nil, err
	}
	ms, serr := m.store.Mirrored(ctx, sub.Reading(), from, to)
	if serr != nil {
		return nil, err
	}
	c := m.calendar(sub.Reading())
	c.mu.Lock()
	if u := c.unsaved; u != nil && u.base == st.Token && u.at.After(st.SyncedAt) {
		st.SyncedAt = u.at
	}
	c.mu.Unlock()
	why := meetingbot.StaleUnavailable
	if errors.Is(err, meetingbot.ErrQuotaWait) || errors.Is(err, meetingbot.ErrUsageLimit) {
		why = meetingbot.StaleQuota
	}
	return ms, &meetingbot.StaleReading{CalendarID: sub.CalendarID, ReadAt: st.SyncedAt, Why: why, Err: err}
}

// lastSync returns when the last sync of calendarID started, as the store
// and this process hold it; false when it was never synced.
func (m *Mirror) lastSync(ctx context.Context, calendarID string) (time.Time, bool) {
	st, ok, err := m.store.CalendarSync(ctx, calendarID)
	if err != nil || !ok || st.Token == "" {
		return time.Time{}, false
	}
	c := m.calendar(calendarID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if u := c.unsaved; u != nil && u.base == st.Token && u.at.After(st.SyncedAt) {
		return u.at, true
	}
	return st.SyncedAt, true
}

// Meeting reads one instance from the calendar itself (events.get): for a
// meeting the check's sync no longer shows at its start, whether it moved
// or was cancelled.
func (m *Mirror) Meeting(ctx context.Context, sub meetingbot.Subscription, eventID string) (meetingbot.Meeting, error) {
	return m.cal.Meeting(ctx, sub, eventID)
}

// Sync syncs calendarID now, incrementally when it can.
func (m *Mirror) Sync(ctx context.Context, calendarID string) error {
	_, err := m.synced(ctx, calendarID, time.Time{}, true, nil)
	return err
}

// SaveEvery is how often a calendar whose syncs change nothing has its
// sync state (the newest token, the time of the last sync) written to the
// store. In between, the process keeps it: a sync that changed nothing
// then writes nothing, where it wrote a row on every sweep, and every
// write makes each other connection to a SQLite file read its pages
// afresh. After a restart, or for another replica, the token written is
// at most that old; Google answers it with the changes since, which the
// mirror already holds.
const SaveEvery = 10 * time.Minute

// calendarState is what the process keeps of one calendar.
type calendarState struct {
	// syncing holds a token while a sync runs: one at a time. A wait for
	// it ends with its context, so that a check before a reminder does not
	// wait past the trigger for a sync in flight.
	syncing chan struct{}
	mu      sync.Mutex // guards unsaved
	// unsaved is the last sync not written to the store, which changed
	// nothing; nil when the store has the latest.
	unsaved *unsavedSync
}

// unsavedSync is a sync that changed nothing, kept in memory. It holds
// while the store's token is still base, the token it synced from: a sync
// by another replica, or a full sync, writes another.
type unsavedSync struct {
	base, token string
	at          time.Time
}

// calendar returns calendarID's state.
func (m *Mirror) calendar(calendarID string) *calendarState {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.cals[calendarID]
	if !ok {
		c = &calendarState{syncing: make(chan struct{}, 1)}
		m.cals[calendarID] = c
	}
	return c
}

// current returns calendarID's sync state as the store and c hold it, and
// whether it is recent enough: when force, a sync that started after
// since; else one within Resync; never when it must be synced in full (no
// token, its last full sync FullEvery old, or its window ending before
// need where a full sync's would not).
func (m *Mirror) current(ctx context.Context, c *calendarState, calendarID string, need time.Time, force bool, since time.Time) (st, saved meetingbot.CalendarSync, ok, full, recent bool, err error) {
	now := m.clock.Now().UTC()
	st, ok, err = m.store.CalendarSync(ctx, calendarID)
	if err != nil {
		return st, st, ok, false, false, err
	}
	saved = st
	c.mu.Lock()
	if u := c.unsaved; u != nil {
		if ok && u.base == st.Token && u.at.After(st.SyncedAt) {
			st.Token, st.SyncedAt = u.token, u.at
		} else {
			c.unsaved = nil // the store has another sync's since
		}
	}
	c.mu.Unlock()
	full = !ok || st.Token == "" || now.Sub(st.FullAt) >= m.opts.FullEvery ||
		(need.After(st.Horizon) && !need.After(now.Add(m.opts.Ahead)))
	age := now.Sub(st.SyncedAt)
	m.mu.Lock()
	dirty := m.dirty[calendarID]
	m.mu.Unlock()
	recent = !full && (force && st.SyncedAt.After(since) || !force && !dirty && age >= 0 && !m.opts.stale(age, m.resync(calendarID)))
	return st, saved, ok, full, recent, nil
}

// synced returns calendarID's sync state after syncing it if it must:
// always when force, else when its last sync is older than Resync; in full
// when it has no token, its last full sync is older than FullEvery, or its
// window ends before need and a full sync's would not. bound, when set,
// gives the context of a sync of a calendar the store holds a reading of
// (its last sync, and whether this one is full); a calendar never synced
// is synced as urgently as can be.
func (m *Mirror) synced(ctx context.Context, calendarID string, need time.Time, force bool,
	bound func(meetingbot.CalendarSync, bool) (context.Context, context.CancelFunc)) (meetingbot.CalendarSync, error) {
	c := m.calendar(calendarID)
	began := m.clock.Now().UTC()
	st, _, ok, full, recent, err := m.current(ctx, c, calendarID, need, force, began)
	if err != nil || recent {
		return st, err
	}
	read := ctx // the Calendar's calls; the store's are not cut short
	switch {
	case bound != nil && ok && st.Token != "":
		var cancel context.CancelFunc
		read, cancel = bound(st, full)
		defer cancel()
	case !ok:
		read = meetingbot.WithUrgency(ctx, began) // nothing to answer from
	}
	select {
	case c.syncing <- struct{}{}:
		defer func() { <-c.syncing }()
	case <-read.Done():
		return st, fmt.Errorf("mirror: calendar %s: waiting for its sync in flight: %w", calendarID, read.Err())
	}
	// The sync this one waited for may have done its work.
	st, saved, _, full, recent, err := m.current(ctx, c, calendarID, need, force, began)
	if err != nil || recent {
		return st, err
	}
	now := m.clock.Now().UTC()
	c.mu.Lock()
	c.unsaved = nil // this sync's outcome replaces it
	c.mu.Unlock()
	if !full {
		res, err := m.cal.Sync(read, calendarID, st.Token, st.From, st.Horizon)
		switch {
		case errors.Is(err, meetingbot.ErrSyncTokenGone):
			m.observe("gone")
			m.log.Info("Google no longer accepts the calendar's sync token; syncing it in full", "calendar", calendarID)
			if err := m.store.ForgetMirror(ctx, calendarID); err != nil {
				return st, err
			}
		case err != nil:
			return st, err
		default:
			if res, err = m.reconcile(read, st, res); err != nil {
				return st, err
			}
			st.Token, st.SyncedAt = res.Token, now
			if len(res.Changed)+len(res.Removed) == 0 && now.Sub(saved.SyncedAt) < SaveEvery {
				c.mu.Lock()
				c.unsaved = &unsavedSync{base: saved.Token, token: st.Token, at: now}
				c.mu.Unlock()
			} else if err := m.store.UpdateMirror(ctx, st, res.Changed, res.Removed); err != nil {
				return st, err
			}
			m.changed(ctx, calendarID, res.Changed)
			m.clean(calendarID)
			m.observe("incremental")
			if len(res.Changed)+len(res.Removed) > 0 {
				m.log.Debug("calendar synced", "calendar", calendarID, "changed", len(res.Changed), "removed", len(res.Removed))
			}
			return st, nil
		}
	}
	from, horizon := now.Add(-m.opts.Behind), now.Add(m.opts.Ahead)
	res, err := m.cal.Sync(read, calendarID, "", from, horizon)
	if err != nil {
		return st, err
	}
	st = meetingbot.CalendarSync{CalendarID: calendarID, Token: res.Token, From: from, Horizon: horizon, FullAt: now, SyncedAt: now}
	if err := m.store.ReplaceMirror(ctx, st, res.Changed); err != nil {
		return st, err
	}
	m.clean(calendarID)
	m.observe("full")
	m.log.Debug("calendar synced in full", "calendar", calendarID, "meetings", len(res.Changed))
	m.changed(ctx, calendarID, res.Changed)
	return st, nil
}

// clean notes that calendarID was synced, so that a notification's sync
// that failed before no longer makes the next sweep sync it.
func (m *Mirror) clean(calendarID string) {
	m.mu.Lock()
	delete(m.dirty, calendarID)
	m.mu.Unlock()
}

// changed tells those registered with OnChange of the meetings a sync
// wrote.
func (m *Mirror) changed(ctx context.Context, calendarID string, ms []meetingbot.Meeting) {
	if len(ms) == 0 {
		return
	}
	m.mu.Lock()
	hear := m.onChange
	m.mu.Unlock()
	for _, f := range hear {
		f(ctx, calendarID, ms)
	}
}

// stale reports whether a sweep that finds a calendar's last sync age old
// syncs it again, the calendar's resync interval being resync. Each
// subscription is swept every Tick at a fixed phase, so the first of its
// sweeps at least resync - 9/10 Tick after a sync comes before resync and
// a tenth of a tick have passed, and on a calendar that nothing else syncs
// it is the sweep exactly resync after the last one (the tenth of a tick
// is slack for a sweep a little late): one call per resync, not one per
// resync less a tick. A resync under ten ticks keeps a tenth of itself
// instead, so that a calendar swept by several subscriptions at different
// phases is not synced by each of them: without push, where Resync is the
// tick, one sync a tick.
func (o Options) stale(age, resync time.Duration) bool {
	return age >= max(resync-o.Tick*9/10, resync*9/10)
}

// resync returns calendarID's resync interval: Options.Resync, or with
// push Options.Unwatched while the calendar has no live channel, whose
// notifications would tell of its changes.
func (m *Mirror) resync(calendarID string) time.Duration {
	if m.opts.Address == "" {
		return m.opts.Resync
	}
	m.mu.Lock()
	exp, ok := m.watched[calendarID]
	m.mu.Unlock()
	if ok && (exp.IsZero() || exp.After(m.clock.Now())) {
		return m.opts.Resync
	}
	return m.opts.Unwatched
}

func (m *Mirror) observe(kind string) {
	if m.opts.Observer != nil {
		m.opts.Observer.Synced(kind)
	}
}

// Handler serves Google's push notifications (POST /google/notify): a
// notification naming a channel the mirror knows, with its token, its
// resource and a state of sync, exists or not_exists is answered 200 and
// its calendar synced within a second by Run; anything else is answered
// 4xx (Google retries only 5xx) and changes nothing.
func (m *Mirror) Handler() http.Handler {
	return http.HandlerFunc(m.serveNotify)
}

// Reading returns calendarID's meetings as the last sync wrote them to the
// store, within its window, without reading the calendar; false when no
// sync of it has completed. It fits snooze.Reading: the catch-up of a move
// a process wrote to the mirror and died before following.
func (m *Mirror) Reading(ctx context.Context, calendarID string) ([]meetingbot.Meeting, bool, error) {
	st, ok, err := m.store.CalendarSync(ctx, calendarID)
	if err != nil || !ok || st.Token == "" {
		return nil, false, err
	}
	ms, err := m.store.Mirrored(ctx, calendarID, st.From, st.Horizon)
	return ms, err == nil, err
}

// OnWake registers f, called after a notification's sync of a calendar to
// plan its subscriptions' changes at once (the scheduler's SweepCalendar),
// after those registered before it. Parts built after the mirror register
// before it runs.
func (m *Mirror) OnWake(f func(ctx context.Context, calendarID string)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.onWake = append(m.onWake, f)
}

// OnChange registers f, called after each sync that wrote meetings new or
// changed to the mirror (every one of a full sync), with them, before the
// sync returns, whoever asked for the sync (a sweep, the check before a
// reminder, a push notification): how the waits that follow a meeting (a
// snooze "at start") learn that it moved.
func (m *Mirror) OnChange(f func(ctx context.Context, calendarID string, changed []meetingbot.Meeting)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.onChange = append(m.onChange, f)
}
