package agenda

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

// Channel agendas ("/meetingbot subscribe <calendar> daily 09:00 weekly
// mon 09:00"): a channel's daily and weekly agendas of the calendar it
// follows, wall-clock schedules as the personal agenda is, in the zone of
// the person who set them, keyed by the channel subscription and the
// first local date (meetingbot.ChannelAgendaKey).

// ChannelSettings are one channel subscription's agendas.
type ChannelSettings struct {
	// Subscription is the channel subscription; its Muted series are
	// left out of its agendas.
	Subscription meetingbot.Subscription
	// Daily is "HH:MM", Weekly "mon 09:00"; "" for none.
	Daily, Weekly string
	// Zone is the IANA zone of their times; "" for UTC.
	Zone string
}

// ChannelList lists the channel subscriptions with an agenda now.
type ChannelList func(ctx context.Context) ([]ChannelSettings, error)

// ChannelNotifier posts channel agendas and finds them again;
// *notify.Slack provides it.
type ChannelNotifier interface {
	// NotifyChannelAgenda posts a in its channel. Its errors are a
	// reminder's.
	NotifyChannelAgenda(ctx context.Context, a meetingbot.ChannelAgenda) (meetingbot.Receipt, error)
	Delivered(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, bool, error)
}

// ChannelEngine plans and posts channel agendas. Create it with
// NewChannels.
type ChannelEngine struct {
	list     ChannelList
	cal      Calendar
	notifier ChannelNotifier
	ledger   Ledger
	opts     Options
	clock    clock.Clock
	log      *slog.Logger

	mu    sync.Mutex
	timer clock.Timer // the next agenda due before the next pass
	busy  map[string]bool
}

// NewChannels returns a ChannelEngine; every dependency is required.
// Options are New's.
func NewChannels(list ChannelList, cal Calendar, notifier ChannelNotifier, ledger Ledger, opts Options) (*ChannelEngine, error) {
	if list == nil || cal == nil || notifier == nil || ledger == nil {
		return nil, errors.New("agenda: channel list, calendar, notifier and ledger are required")
	}
	opts.Interval = cmp.Or(opts.Interval, meetingbot.DefaultTickInterval)
	opts.Lease = cmp.Or(opts.Lease, 2*time.Minute)
	opts.SendTimeout = cmp.Or(opts.SendTimeout, time.Minute)
	if opts.Clock == nil {
		opts.Clock = clock.New()
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &ChannelEngine{list: list, cal: cal, notifier: notifier, ledger: ledger, opts: opts, clock: opts.Clock, log: log, busy: map[string]bool{}}, nil
}

// Run plans at once and then every Interval until ctx ends, firing each
// agenda at its instant on a timer; then it returns nil.
func (e *ChannelEngine) Run(ctx context.Context) error {
	clock.Every(ctx, e.clock, e.opts.Interval, func() {
		if err := e.Tick(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("channel agenda pass failed; retrying at the next", "err", err)
		}
	})
	e.mu.Lock()
	if e.timer != nil {
		e.timer.Stop()
	}
	e.mu.Unlock()
	return nil
}

// Tick is one pass at the clock's now: each agenda due and unsettled is
// posted (or recorded as skipped: a day without meetings, too late to be
// of use), and a timer is armed for the first due before the next pass.
func (e *ChannelEngine) Tick(ctx context.Context) error {
	sets, err := e.list(ctx)
	if err != nil {
		return fmt.Errorf("agenda: channels: %w", err)
	}
	now := e.clock.Now()
	var next time.Time
	var firstErr error
	for _, set := range sets {
		for _, a := range channelPlans(set, now) {
			switch {
			case a.At.After(now):
				if a.At.Sub(now) <= 2*e.opts.Interval && (next.IsZero() || a.At.Before(next)) {
					next = a.At
				}
			case now.Before(a.deadline):
				if err := e.deliver(ctx, a.ChannelAgenda, set.Subscription, now); err != nil {
					e.log.Warn("channel agenda failed; retrying at the next pass", "subscription", set.Subscription.ID, "key", a.Key(), "err", err)
					firstErr = cmp.Or(firstErr, err)
				}
			}
		}
	}
	e.arm(ctx, next, now)
	return firstErr
}

// arm keeps one timer, for the next agenda due before the next pass: it
// runs a pass at that instant.
func (e *ChannelEngine) arm(ctx context.Context, at, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	if at.IsZero() || ctx.Err() != nil {
		return
	}
	e.timer = e.clock.AfterFunc(at.Sub(now), func() {
		if err := e.Tick(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("channel agenda pass failed; retrying at the next", "err", err)
		}
	})
}

// channelPlan is one agenda as a pass plans it.
type channelPlan struct {
	meetingbot.ChannelAgenda
	deadline time.Time // after this it is not posted: too late to be of use
}

// channelPlans returns set's agendas of the local days around now in its
// zone: each day's daily one, and the weekly one of a day that is its
// weekday. Instants come from time.Date in the zone, as a person's.
func channelPlans(set ChannelSettings, now time.Time) []channelPlan {
	loc := zoneOf(set.Zone)
	var out []channelPlan
	add := func(hhmm string, weekly bool, day time.Weekday) {
		ps, err := plansAround(set.Subscription.ID, hhmm, set.Subscription.CalendarID, loc, now)
		if err != nil {
			return
		}
		for _, p := range ps {
			end := p.dayEnd
			if weekly {
				if p.dayStart.Add(12*time.Hour).In(loc).Weekday() != day {
					continue
				}
				y, m, d := p.dayStart.Add(12 * time.Hour).In(loc).Date()
				end = dayStart(time.Date(y, m, d+7, 12, 0, 0, 0, loc))
			}
			out = append(out, channelPlan{ChannelAgenda: meetingbot.ChannelAgenda{Subscription: set.Subscription, Weekly: weekly,
				Date: p.date, Zone: loc, At: p.at, Start: p.dayStart, End: end}, deadline: p.deadline})
		}
	}
	if set.Daily != "" {
		add(set.Daily, false, 0)
	}
	if day, hhmm, ok := meetingbot.ParseWeekly(set.Weekly); ok {
		add(hhmm, true, day)
	}
	return out
}

// deliver settles one due agenda: claimed, read, posted (or skipped for
// a day with nothing), recorded; an interrupted post is looked up first.
func (e *ChannelEngine) deliver(parent context.Context, a meetingbot.ChannelAgenda, sub meetingbot.Subscription, now time.Time) error {
	key := a.Key()
	e.mu.Lock()
	if e.busy[key] {
		e.mu.Unlock()
		return nil
	}
	e.busy[key] = true
	e.mu.Unlock()
	defer func() { e.mu.Lock(); delete(e.busy, key); e.mu.Unlock() }()

	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), e.opts.SendTimeout)
	defer cancel()
	a.Late = now.Sub(a.At) > time.Minute
	en := a.Entry()
	status, prev, err := e.ledger.Claim(ctx, en, now, now.Add(e.opts.Lease))
	if err != nil || status == meetingbot.Busy || status == meetingbot.Done {
		return err
	}
	log := e.log.With("subscription", sub.ID, "key", key)
	if status == meetingbot.Orphaned {
		en.Attempts = prev.Attempts
		rc, found, err := e.notifier.Delivered(ctx, a.Reminder())
		switch {
		case err == nil && found:
			en.Outcome, en.Channel, en.MessageTS = meetingbot.Sent, rc.Channel, rc.TS
			en.Code, en.Reason = meetingbot.ReasonInterruptedConfirmed, "confirmed in Slack after an interrupted send"
			return e.record(ctx, log, en)
		case err != nil && !errors.Is(err, meetingbot.ErrUnknown):
			_ = e.ledger.Release(ctx, en, "an interrupted send is not confirmed yet: "+err.Error())
			return err
		}
	}
	day, err := e.cal.Day(ctx, sub, a.Start.Add(-time.Nanosecond), a.End.Add(-time.Nanosecond))
	if err != nil {
		if meetingbot.IsPermanent(err) {
			en.Outcome, en.Code, en.Reason = meetingbot.Failed, meetingbot.ReasonPermanent, err.Error()
			return e.record(ctx, log, en)
		}
		_ = e.ledger.Release(ctx, en, "the calendar could not be read: "+err.Error())
		return err
	}
	for _, m := range day.Meetings {
		if !sub.Mutes(m) {
			a.Meetings = append(a.Meetings, m)
		}
	}
	slices.SortStableFunc(a.Meetings, func(x, y meetingbot.Meeting) int { return x.Start.Compare(y.Start) })
	a.AllDay = day.AllDay
	if len(a.Meetings) == 0 && len(a.AllDay) == 0 {
		en.Outcome, en.Code, en.Reason = meetingbot.Skipped, meetingbot.ReasonNoMeetings, "nothing on the calendar then"
		return e.record(ctx, log, en)
	}
	rc, err := e.notifier.NotifyChannelAgenda(ctx, a)
	switch {
	case err == nil:
		en.Outcome, en.Channel, en.MessageTS = meetingbot.Sent, rc.Channel, rc.TS
		log.Info("channel agenda sent", "meetings", len(a.Meetings), "channel", rc.Channel, "ts", rc.TS)
	case errors.Is(err, meetingbot.ErrUnconfirmed):
		_ = e.ledger.Release(ctx, en, "send unconfirmed: "+err.Error())
		return err
	case meetingbot.IsPermanent(err):
		en.Outcome, en.Code, en.Reason = meetingbot.Failed, meetingbot.ReasonPermanent, err.Error()
	default:
		en.Outcome, en.Retryable, en.Code, en.Reason = meetingbot.Failed, true, meetingbot.ReasonTransient, err.Error()
	}
	if rerr := e.record(ctx, log, en); rerr != nil {
		return rerr
	}
	return err
}

func (e *ChannelEngine) record(ctx context.Context, log *slog.Logger, en meetingbot.Entry) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := e.ledger.Record(ctx, en, e.clock.Now().UTC()); err != nil {
		log.Error("channel agenda outcome not recorded", "outcome", en.Outcome, "err", err)
		return err
	}
	return nil
}
