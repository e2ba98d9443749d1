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
// every sweep did, and 5 minutes with push, where a Calendar push
// notification syncs it within a second and wakes the scheduler. The
// check just before reminders go out (FreshMeetings) syncs the calendar
// whatever the age of its last sync: as fresh as reading each meeting
// (events.get), one call for all the calendar's reminders due at that
// instant, and it counts as the calendar's resync. Subscriptions of one
// calendar share one mirror and one channel.
//
// The package imports the root's words and declares what it consumes
// (consumes.go); cmd/bot adapts the calendar package and the stores.
package mirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/clock"
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
	// DefaultResyncPush is CALENDAR_RESYNC_INTERVAL's default with push on.
	DefaultResyncPush = 5 * time.Minute
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
	Resync time.Duration
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
	// Wake is called after a notification's sync of a calendar, to plan
	// its subscriptions' changes at once.
	Wake func(ctx context.Context, calendarID string)
	// Maintain is how often Run looks at the channels and the calendars
	// subscribed; DefaultMaintain by default.
	Maintain time.Duration
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
	cals     map[string]*calendarState         // per calendar
	channels map[string]meetingbot.PushChannel // by ID: every channel known, the store's and those being opened
	reloaded time.Duration                     // on the elapsed clock: when channels were last read from the store
	pending  map[string]bool                   // calendars notified and not synced yet
	renewal  map[string]bool                   // channels opened to replace a live one, until their first notification
	kick     chan struct{}                     // wakes Run for pending
	pushes   pushSyncs                         // the syncs notifications asked for, coalesced
}

// New returns a Mirror reading cal and keeping the mirror in store.
func New(cal Calendar, store Store, opts Options) (*Mirror, error) {
	if opts.Clock == nil {
		opts.Clock = clock.New()
	}
	opts.Resync = orDefault(opts.Resync, meetingbot.DefaultTickInterval)
	opts.Tick = orDefault(opts.Tick, meetingbot.DefaultTickInterval)
	opts.Ahead = orDefault(opts.Ahead, DefaultAhead)
	opts.Behind = orDefault(opts.Behind, DefaultBehind)
	opts.FullEvery = orDefault(opts.FullEvery, DefaultFullEvery)
	opts.RenewBefore = orDefault(opts.RenewBefore, DefaultRenewBefore)
	opts.Maintain = orDefault(opts.Maintain, DefaultMaintain)
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
		reloaded: -time.Hour, pending: map[string]bool{}, renewal: map[string]bool{}, kick: make(chan struct{}, 1),
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
// Errors are the Calendar's (a sync that failed: the sweep retries) or the
// store's.
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
	st, err := m.synced(ctx, sub.CalendarID, to, force)
	if err != nil {
		return nil, err
	}
	if from.Before(st.From) || to.After(st.Horizon) {
		return m.cal.Meetings(ctx, sub, from, to)
	}
	return m.store.Mirrored(ctx, sub.CalendarID, from, to)
}

// Meeting reads one instance from the calendar itself (events.get): for a
// meeting the check's sync no longer shows at its start, whether it moved
// or was cancelled.
func (m *Mirror) Meeting(ctx context.Context, sub meetingbot.Subscription, eventID string) (meetingbot.Meeting, error) {
	return m.cal.Meeting(ctx, sub, eventID)
}

// Sync syncs calendarID now, incrementally when it can.
func (m *Mirror) Sync(ctx context.Context, calendarID string) error {
	_, err := m.synced(ctx, calendarID, time.Time{}, true)
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
	mu sync.Mutex // held by a sync: one at a time
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

// calendar returns calendarID's state, with its lock held.
func (m *Mirror) calendar(calendarID string) *calendarState {
	m.mu.Lock()
	c, ok := m.cals[calendarID]
	if !ok {
		c = &calendarState{}
		m.cals[calendarID] = c
	}
	m.mu.Unlock()
	c.mu.Lock()
	return c
}

// synced returns calendarID's sync state after syncing it if it must:
// always when force, else when its last sync is older than Resync; in full
// when it has no token, its last full sync is older than FullEvery, or its
// window ends before need and a full sync's would not.
func (m *Mirror) synced(ctx context.Context, calendarID string, need time.Time, force bool) (meetingbot.CalendarSync, error) {
	c := m.calendar(calendarID)
	defer c.mu.Unlock()
	now := m.clock.Now().UTC()
	st, ok, err := m.store.CalendarSync(ctx, calendarID)
	if err != nil {
		return st, err
	}
	saved := st
	if u := c.unsaved; u != nil {
		if ok && u.base == st.Token && u.at.After(st.SyncedAt) {
			st.Token, st.SyncedAt = u.token, u.at
		} else {
			c.unsaved = nil // the store has another sync's since
		}
	}
	full := !ok || st.Token == "" || now.Sub(st.FullAt) >= m.opts.FullEvery ||
		(need.After(st.Horizon) && !need.After(now.Add(m.opts.Ahead)))
	if age := now.Sub(st.SyncedAt); !force && !full && age >= 0 && !m.opts.stale(age) {
		return st, nil
	}
	c.unsaved = nil // this sync's outcome replaces it
	if !full {
		res, err := m.cal.Sync(ctx, calendarID, st.Token, st.From, st.Horizon)
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
			if res, err = m.reconcile(ctx, st, res); err != nil {
				return st, err
			}
			st.Token, st.SyncedAt = res.Token, now
			if len(res.Changed)+len(res.Removed) == 0 && now.Sub(saved.SyncedAt) < SaveEvery {
				c.unsaved = &unsavedSync{base: saved.Token, token: st.Token, at: now}
			} else if err := m.store.UpdateMirror(ctx, st, res.Changed, res.Removed); err != nil {
				return st, err
			}
			m.observe("incremental")
			if len(res.Changed)+len(res.Removed) > 0 {
				m.log.Debug("calendar synced", "calendar", calendarID, "changed", len(res.Changed), "removed", len(res.Removed))
			}
			return st, nil
		}
	}
	from, horizon := now.Add(-m.opts.Behind), now.Add(m.opts.Ahead)
	res, err := m.cal.Sync(ctx, calendarID, "", from, horizon)
	if err != nil {
		return st, err
	}
	st = meetingbot.CalendarSync{CalendarID: calendarID, Token: res.Token, From: from, Horizon: horizon, FullAt: now, SyncedAt: now}
	if err := m.store.ReplaceMirror(ctx, st, res.Changed); err != nil {
		return st, err
	}
	m.observe("full")
	m.log.Debug("calendar synced in full", "calendar", calendarID, "meetings", len(res.Changed))
	return st, nil
}

// stale reports whether a sweep that finds a calendar's last sync age old
// syncs it again. Each subscription is swept every Tick at a fixed phase,
// so the first of its sweeps at least Resync - 9/10 Tick after a sync comes
// before Resync and a tenth of a tick have passed, and on a calendar that
// nothing else syncs it is the sweep exactly Resync after the last one (the
// tenth of a tick is slack for a sweep a little late): one call per Resync,
// not one per Resync less a tick. A Resync under ten ticks keeps a tenth of
// itself instead, so that a calendar swept by several subscriptions at
// different phases is not synced by each of them: without push, where
// Resync is the tick, one sync a tick.
func (o Options) stale(age time.Duration) bool {
	return age >= max(o.Resync-o.Tick*9/10, o.Resync*9/10)
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
