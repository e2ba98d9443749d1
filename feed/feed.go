// Package feed tells a channel what changed in the calendar it follows
// ("/meetingbot subscribe <calendar> changes"): each event added, moved,
// cancelled, renamed or re-placed, once (docs/design.md, "Team calendars
// in channels").
//
// It reads the mirror the sweeps keep, and compares what it reads with
// what the channel was last told (Seen): a difference is a change. Each
// notice is keyed by the event and the state it reached
// (meetingbot.FeedKey) and claimed, sent and recorded in the ledger like a
// reminder, so that a restart, a second replica or a resync that sees the
// same change again never repeats it. An event still being edited (Google
// stamped it within Settle) waits, so that a burst of edits is one notice
// with its final state. The first reading of a calendar announces nothing,
// nor does a change to an event that has started, nor one to anything a
// channel is not told (an attendee's answer, the bot's own RSVP write).
// Many changes found at once are one digest.
package feed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
)

// Options configure an Engine; the zero value of each field takes its
// default.
type Options struct {
	// Interval is how often Run looks for changes;
	// meetingbot.DefaultTickInterval by default.
	Interval time.Duration
	// Settle is how long after Google last stamped an event (its
	// updated) a change of it waits, so that edits made together are one
	// notice; twice Interval, and at least a second, by default.
	Settle time.Duration
	// Ahead is how far ahead changes are announced: within the mirror's
	// window (a week and a day), so that a pass costs no Calendar call the
	// mirror does not make anyway; 7 days by default.
	Ahead time.Duration
	// DigestAt is how many notices of one channel found together go out
	// as one digest; meetingbot.FeedDigestAt by default.
	DigestAt int
	// Lease bounds a ledger claim of a process that cannot be told alive
	// or dead; 2 minutes by default.
	Lease time.Duration
	// SendTimeout bounds one post; 1 minute by default.
	SendTimeout time.Duration
	// Clock tells the time; clock.New() by default.
	Clock clock.Clock
	// Logger receives the logs; discarded by default.
	Logger *slog.Logger
}

// Engine sends the change notices of the channels that follow their
// calendars. Create it with New.
type Engine struct {
	subs     Subscriptions
	source   Source
	seen     Seen
	notifier Notifier
	ledger   Ledger
	opts     Options
	clock    clock.Clock
	log      *slog.Logger

	mu     sync.Mutex
	active map[string]bool // the subscriptions a pass of this process is at
}

// maxConcurrent bounds the channels a pass reads and notifies at once.
const maxConcurrent = 8

// New returns an Engine; every dependency is required.
func New(subs Subscriptions, source Source, seen Seen, notifier Notifier, ledger Ledger, opts Options) (*Engine, error) {
	if subs == nil || source == nil || seen == nil || notifier == nil || ledger == nil {
		return nil, errors.New("feed: subscriptions, source, seen, notifier and ledger are required")
	}
	opts.Interval = cmp.Or(opts.Interval, meetingbot.DefaultTickInterval)
	opts.Settle = cmp.Or(opts.Settle, max(2*opts.Interval, time.Second))
	opts.Ahead = cmp.Or(opts.Ahead, 7*24*time.Hour)
	opts.DigestAt = cmp.Or(opts.DigestAt, meetingbot.FeedDigestAt)
	opts.Lease = cmp.Or(opts.Lease, 2*time.Minute)
	opts.SendTimeout = cmp.Or(opts.SendTimeout, time.Minute)
	if opts.Clock == nil {
		opts.Clock = clock.New()
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{subs: subs, source: source, seen: seen, notifier: notifier, ledger: ledger,
		opts: opts, clock: opts.Clock, log: log, active: map[string]bool{}}, nil
}

// Run looks for changes at once and then every Interval until ctx ends,
// and returns nil. A failed pass is logged and retried at the next. A
// send in flight when ctx ends finishes and is recorded (SendTimeout at
// most).
func (e *Engine) Run(ctx context.Context) error {
	clock.Every(ctx, e.clock, e.opts.Interval, func() {
		if err := e.Tick(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("change notices pass failed; retrying at the next", "err", err)
		}
	})
	return nil
}

// Tick is one pass at the clock's now: each channel that follows its
// calendar's changes is told those that settled since the last pass. It
// returns the first error that kept it from looking at a channel; one
// channel's failure does not stop the others.
func (e *Engine) Tick(ctx context.Context) error {
	subs, err := e.subs(ctx)
	if err != nil {
		return fmt.Errorf("feed: subscriptions: %w", err)
	}
	now := e.clock.Now().UTC()
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxConcurrent)
	for _, f := range subs {
		if !e.enter(f.Subscription.ID) {
			continue // this process's previous pass is still at it
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem; e.leave(f.Subscription.ID) }()
			err := e.channel(ctx, f, now)
			var stale *meetingbot.StaleReading
			switch {
			case errors.As(err, &stale):
				// The calendar cannot answer now, which the mirror says
				// already: a change is told from a fresh reading.
				e.log.Debug("change notices wait for a fresh reading of the calendar", "subscription", f.Subscription.ID, "err", err)
			case err != nil:
				e.log.Warn("change notices of a channel failed; retrying at the next pass", "subscription", f.Subscription.ID, "err", err)
				mu.Lock()
				firstErr = cmp.Or(firstErr, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return firstErr
}

func (e *Engine) enter(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.active[id] {
		return false
	}
	e.active[id] = true
	return true
}

func (e *Engine) leave(id string) {
	e.mu.Lock()
	delete(e.active, id)
	e.mu.Unlock()
}

// channel tells f's channel the changes of its calendar settled at now.
func (e *Engine) channel(ctx context.Context, f Followed, now time.Time) error {
	sub := f.Subscription
	pseudo := meetingbot.FeedSubscription(sub.ID)
	seen, primed, err := e.seen.FeedSeen(ctx, pseudo)
	if err != nil {
		return err
	}
	ms, err := e.source.Meetings(ctx, sub, now, now.Add(e.opts.Ahead))
	if err != nil {
		return err
	}
	if primed.IsZero() || primed.Before(f.Since) {
		// The first reading, or the first since the channel followed the
		// changes again: what is on the calendar now is the agenda's to
		// tell, not news.
		if !primed.IsZero() {
			if err := e.seen.ForgetFeed(ctx, pseudo); err != nil {
				return err
			}
		}
		e.log.Info("calendar read for its change notices; changes from now on are told", "subscription", sub.ID, "events", len(ms))
		return e.seen.PutFeedSeen(ctx, pseudo, now, ms, nil)
	}
	if err := e.settlePending(ctx, f, pseudo, seen, ms, now); err != nil {
		return err
	}
	d := e.diff(ctx, f, seen, ms, primed, now)
	if err := e.seen.PutFeedSeen(ctx, pseudo, time.Time{}, d.quiet, d.gone); err != nil {
		return err
	}
	if len(d.notices) == 0 {
		return d.err
	}
	if d.pending && !e.overdue(d.notices, now) {
		// Other events are still being changed: what was done together
		// (an import, a rota rewritten) is told together, once it is done.
		return d.err
	}
	var told []meetingbot.Notice
	if len(d.notices) >= e.opts.DigestAt {
		told = e.deliver(ctx, d.notices, now)
	} else {
		for _, n := range d.notices {
			told = append(told, e.deliver(ctx, []meetingbot.Notice{n}, now)...)
		}
	}
	var put []meetingbot.Meeting
	var drop []string
	for _, n := range told {
		if n.Now.ID == "" || !n.Now.Start.After(now) || n.Now.Start.After(now.Add(e.opts.Ahead)) {
			drop = append(drop, n.Was.ID)
		} else {
			put = append(put, n.Now)
		}
	}
	if err := e.seen.PutFeedSeen(ctx, pseudo, time.Time{}, put, drop); err != nil {
		return err
	}
	events := make([]string, len(told))
	for i, n := range told {
		events[i] = n.Meeting().ID
	}
	if err := e.seen.DropFeedPending(ctx, pseudo, events); err != nil {
		return err
	}
	return d.err
}

// diffed is what a pass found of one channel's calendar.
type diffed struct {
	// notices are the changes to tell, in start order.
	notices []meetingbot.Notice
	// quiet are events the channel is to know without a notice (one that
	// only now comes within the window, one whose change it is not told
	// of); gone those it is to forget (started, over, out of the window).
	quiet []meetingbot.Meeting
	gone  []string
	// pending is true when an event's change waits for its edits to
	// settle.
	pending bool
	// err is why an event was not looked at; the next pass looks again.
	err error
}

// holdAtMost is how many settle times the changes of a channel wait for
// others still being made: a calendar edited without pause is still told.
const holdAtMost = 5

// overdue reports whether one of ns, settled, has waited for the others
// long enough to be told without them.
func (e *Engine) overdue(ns []meetingbot.Notice, now time.Time) bool {
	for _, n := range ns {
		if u := n.Now.Updated; !u.IsZero() && now.Sub(u) >= holdAtMost*e.opts.Settle {
			return true
		}
	}
	return false
}

// diff compares ms, f's calendar from now to Ahead, with seen, what its
// channel was last told, whose first reading was at primed.
func (e *Engine) diff(ctx context.Context, f Followed, seen map[string]meetingbot.Meeting, ms []meetingbot.Meeting, primed, now time.Time) diffed {
	var d diffed
	current := make(map[string]bool, len(ms))
	for _, m := range ms {
		current[m.ID] = true
		was, known := seen[m.ID]
		switch {
		case !m.Start.After(now):
			continue // started: over for a notice
		case !known && e.before(m, primed):
			d.quiet = append(d.quiet, m) // there before: it only comes within the window
		case e.settling(m, now):
			d.pending = true // being edited: its final state is told
		case !known:
			d.notices = append(d.notices, e.notice(f, meetingbot.Meeting{}, m, now))
		case len(meetingbot.FeedChanges(was, m)) > 0:
			d.notices = append(d.notices, e.notice(f, was, m, now))
		case !was.Updated.Equal(m.Updated) || was.Private != m.Private:
			d.quiet = append(d.quiet, m) // nothing the channel is told of
		}
	}
	var absent []meetingbot.Meeting
	for id, was := range seen {
		switch {
		case current[id]:
		case !was.Start.After(now):
			d.gone = append(d.gone, id) // started or over: no notice
		default:
			absent = append(absent, was)
		}
	}
	slices.SortFunc(absent, func(a, b meetingbot.Meeting) int { return a.Start.Compare(b.Start) })
	d.notices = append(d.notices, e.absent(ctx, f, absent, now, &d)...)
	slices.SortStableFunc(d.notices, func(a, b meetingbot.Notice) int { return a.Meeting().Start.Compare(b.Meeting().Start) })
	return d
}

// before reports whether m was on the calendar, as it is, before the
// channel could have been told: last changed before the first reading, or
// before it came within the window read.
func (e *Engine) before(m meetingbot.Meeting, primed time.Time) bool {
	if m.Updated.IsZero() {
		return false
	}
	return m.Updated.Before(primed) || m.Updated.Before(m.Start.Add(-e.opts.Ahead))
}

// settling reports whether m was changed within Settle of now: more edits
// may follow, and the notice tells the last.
func (e *Engine) settling(m meetingbot.Meeting, now time.Time) bool {
	return !m.Updated.IsZero() && now.Sub(m.Updated) < e.opts.Settle
}

// absent tells what became of the events the channel knows that the
// reading no longer has: cancelled, moved out of the window, or moved to
// a time already past (the channel still expects it: a move). A few
// are each read from the calendar; a flood (more than DigestAt, someone
// clearing a calendar) is told as cancelled without a read each.
func (e *Engine) absent(ctx context.Context, f Followed, absent []meetingbot.Meeting, now time.Time, d *diffed) []meetingbot.Notice {
	var out []meetingbot.Notice
	if len(absent) > e.opts.DigestAt {
		for _, was := range absent {
			out = append(out, e.notice(f, was, meetingbot.Meeting{}, now))
		}
		return out
	}
	for _, was := range absent {
		m, err := e.source.Meeting(ctx, f.Subscription, was.ID)
		switch {
		case errors.Is(err, meetingbot.ErrGone):
			out = append(out, e.notice(f, was, meetingbot.Meeting{}, now))
		case err != nil:
			d.err = cmp.Or(d.err, err)
		case len(meetingbot.FeedChanges(was, m)) == 0:
			// Still there as the channel knows it: the reading missed it.
		case e.settling(m, now):
			d.pending = true
		default:
			out = append(out, e.notice(f, was, m, now))
		}
	}
	return out
}

// notice is the notice of the change of an event from was to now.
func (e *Engine) notice(f Followed, was, now meetingbot.Meeting, at time.Time) meetingbot.Notice {
	id, updated := now.ID, now.Updated
	if id == "" {
		id, updated = was.ID, was.Updated
	}
	return meetingbot.Notice{Key: meetingbot.FeedKey(id, was, now, updated), Subscription: f.Subscription,
		Changes: meetingbot.FeedChanges(was, now), Was: was, Now: now, At: at}
}
