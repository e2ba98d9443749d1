package main

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/internal/retry"
	"github.com/meetingbot/meetingbot/mirror"
	"github.com/meetingbot/meetingbot/monitor"
)

// What Calendar calls cost: Google bills a Cloud project past a daily
// threshold of Calendar API requests ("Daily billing threshold", the
// Calendar API's usage-limits page, 2026: 1,000,000 a day per project,
// which cannot be raised), CALENDAR_DAILY_REQUEST_THRESHOLD. The bot
// projects its day against it at start-up, from the configuration, and
// every hour, from the requests it made, and says past warnAt what brings
// it down (docs/operations.md, What Calendar calls cost).

// Assumptions of the projection from the configuration, per calendar and
// day: a working day of meetings (6 to 10 in working hours), and with push
// a notification's sync for every other one of them changing.
const (
	assumedMeetings = 8
	assumedChanges  = 4
)

// warnAt is the share of the threshold past which the projection warns.
const warnAt = 0.8

// projectEvery is how often the day is projected again from the requests
// made.
const projectEvery = time.Hour

// callsPerDay is a day of Calendar requests, by what each is for.
type callsPerDay struct {
	Calendars int
	// Resyncs are the incremental syncs of each calendar, one per
	// CALENDAR_RESYNC_INTERVAL (without push, at every sweep by default):
	// the safety resync with push, what finds changes without.
	Resyncs float64
	// Checks are the syncs just before the reminders of one instant go
	// out, one per meeting and offset.
	Checks float64
	// Full are the full syncs that refill each mirror's window, one a day.
	Full float64
	// Changes are the syncs push notifications ask for, one per change.
	Changes float64
	// Channels are the channels' upkeep with push: a watch renewing each
	// channel before it expires (a week), and the stop of the old one.
	Channels float64
}

// Total is the day's requests.
func (c callsPerDay) Total() float64 { return c.Resyncs + c.Checks + c.Full + c.Changes + c.Channels }

// PerCalendar is the day's requests of one calendar.
func (c callsPerDay) PerCalendar() float64 {
	if c.Calendars == 0 {
		return 0
	}
	return c.Total() / float64(c.Calendars)
}

// estimateDay projects the Calendar requests of a day of n calendars under
// cfg, with push as cfg has it, or with it on when push is set.
func estimateDay(cfg config.Config, n int, push bool) callsPerDay {
	day := 24 * time.Hour
	resync := cfg.ResyncInterval
	if push && cfg.PublicURL == "" {
		resync = config.DefaultResyncPush
	}
	tick := cfg.TickInterval
	if resync <= 0 || tick <= 0 {
		return callsPerDay{Calendars: n}
	}
	// A sweep, every tick, syncs a calendar whose last sync is as old as
	// mirror.Options.stale says: every whole number of ticks past it.
	stale := max(resync-tick*9/10, resync*9/10)
	period := tick * time.Duration(math.Ceil(float64(stale)/float64(tick)))
	c := callsPerDay{
		Calendars: n,
		Resyncs:   float64(n) * float64(day) / float64(period),
		Checks:    float64(n * assumedMeetings * max(1, len(cfg.Offsets))),
		Full:      float64(n) * float64(day) / float64(mirror.DefaultFullEvery),
	}
	if push || cfg.PublicURL != "" {
		// Google's default channel life is a week; the mirror renews
		// DefaultRenewBefore ahead.
		renewEvery := 7*day - mirror.DefaultRenewBefore
		c.Changes = float64(n * assumedChanges)
		c.Channels = 2 * float64(n) * float64(day) / float64(renewEvery)
	}
	return c
}

// spend counts the Calendar requests made and projects the day's against
// CALENDAR_DAILY_REQUEST_THRESHOLD: at start-up from the configuration,
// then every projectEvery from what was made, on mon's gauges and in the
// log, which warns once when the projection passes warnAt of the
// threshold and says so again when it falls back.
type spend struct {
	cfg       config.Config
	clock     clock.Clock
	calendars func(ctx context.Context) ([]string, error)
	mon       *monitor.Monitor
	log       *slog.Logger

	made atomic.Int64 // Calendar requests since start

	mu        sync.Mutex
	began     time.Duration // on the elapsed clock
	hourMade  int64         // made when the last projection was
	hourBegan time.Duration
	over      bool
}

// newSpend returns a spend counting from now; its calendars are set
// before startUp, once the store is open.
func newSpend(cfg config.Config, clk clock.Clock, mon *monitor.Monitor, log *slog.Logger) *spend {
	now := clk.Elapsed()
	return &spend{cfg: cfg, clock: clk, mon: mon, log: log, began: now, hourBegan: now}
}

// observe counts one Calendar API attempt, whatever its outcome: Google
// counts the requests it answers. It fits calendar.Config.Observe, and
// passes the call on to next when set.
func (s *spend) observe(next func(call string, class retry.Class)) func(call string, class retry.Class) {
	return func(call string, class retry.Class) {
		s.made.Add(1)
		if next != nil {
			next(call, class)
		}
	}
}

// startUp projects the day from the configuration and the calendars
// subscribed now.
func (s *spend) startUp(ctx context.Context) {
	cals, err := s.calendars(ctx)
	if err != nil {
		return // the store's trouble, said by its other readers
	}
	est := estimateDay(s.cfg, len(cals), false)
	msg := fmt.Sprintf("Calendar requests a day, projected from the configuration: about %s for %s (%s each: %s)",
		count(est.Total()), calendarsOf(est.Calendars), count(est.PerCalendar()), breakdown(est))
	if s.cfg.PublicURL == "" && est.Calendars > 0 {
		push := estimateDay(s.cfg, len(cals), true)
		msg += fmt.Sprintf("; without push notifications each calendar costs a sync every CALENDAR_RESYNC_INTERVAL (%v), where with PUBLIC_URL it would cost about %s a day",
			s.cfg.ResyncInterval, count(push.PerCalendar()))
	}
	s.report(est.Total(), msg, est.Calendars, "configuration")
}

// breakdown says what a day's requests are for.
func breakdown(c callsPerDay) string {
	n := float64(max(c.Calendars, 1))
	parts := []string{fmt.Sprintf("%s resyncs", count(c.Resyncs/n)), fmt.Sprintf("%s checks before reminders", count(c.Checks/n)), fmt.Sprintf("%s full sync", count(c.Full/n))}
	if c.Changes > 0 || c.Channels > 0 {
		parts = append(parts, fmt.Sprintf("%s syncs on notifications", count(c.Changes/n)), fmt.Sprintf("%.2f channel renewals and stops", c.Channels/n))
	}
	return strings.Join(parts, ", ")
}

// measure projects the day from the requests made: the last hour's, or
// the average since start, whichever is more, times a day.
func (s *spend) measure(ctx context.Context) {
	made := s.made.Load()
	now := s.clock.Elapsed()
	s.mu.Lock()
	hour, hourSpan := made-s.hourMade, now-s.hourBegan
	total, span := made, now-s.began
	s.hourMade, s.hourBegan = made, now
	s.mu.Unlock()
	if hourSpan <= 0 || span <= 0 {
		return
	}
	day := float64(24 * time.Hour)
	recent := float64(hour) * day / float64(hourSpan)
	average := float64(total) * day / float64(span)
	cals, err := s.calendars(ctx)
	if err != nil {
		cals = nil
	}
	msg := fmt.Sprintf("Calendar requests a day, projected from those made: about %s (%d in the last %v, %d in %v since start)",
		count(max(recent, average)), hour, hourSpan.Round(time.Second), total, span.Round(time.Second))
	s.report(max(recent, average), msg, len(cals), "measured")
}

// report sets the gauges and logs the projection: at WARN with the fixes
// when it passes warnAt of the threshold, at INFO otherwise.
func (s *spend) report(requests float64, msg string, calendars int, basis string) {
	threshold := float64(s.cfg.CalendarDailyThreshold)
	if threshold <= 0 {
		threshold = config.DefaultDailyRequestThreshold
	}
	ratio := requests / threshold
	s.mon.CalendarDailyProjection(requests, ratio)
	s.mu.Lock()
	was := s.over
	s.over = ratio > warnAt
	s.mu.Unlock()
	msg += fmt.Sprintf(", %.1f%% of CALENDAR_DAILY_REQUEST_THRESHOLD (%s)", 100*ratio, count(threshold))
	attrs := []any{"requests", math.Round(requests), "ratio", math.Round(ratio*1000) / 1000, "threshold", s.cfg.CalendarDailyThreshold, "calendars", calendars, "basis", basis}
	switch {
	case ratio > warnAt && !was:
		s.log.Warn(msg+": past 80%, and past 100% Google bills the project. Fixes: "+strings.Join(spendFixes(s.cfg, calendars, threshold), "; "), attrs...)
	case ratio <= warnAt && was:
		s.log.Info(msg+": back under 80%", attrs...)
	default:
		s.log.Info(msg, attrs...)
	}
}

// spendFixes says what brings n calendars' day under warnAt of threshold.
func spendFixes(cfg config.Config, n int, threshold float64) []string {
	var fixes []string
	if cfg.PublicURL == "" {
		push := estimateDay(cfg, n, true)
		fixes = append(fixes, fmt.Sprintf("turn push notifications on with PUBLIC_URL (a calendar is read when it changes and resynced every %v: about %s requests a day for %s)",
			config.DefaultResyncPush, count(push.Total()), calendarsOf(n)))
	}
	if r, ok := fitResync(cfg, n, threshold); ok {
		c := cfg
		c.ResyncInterval = r
		fixes = append(fixes, fmt.Sprintf("a longer CALENDAR_RESYNC_INTERVAL, e.g. CALENDAR_RESYNC_INTERVAL=%v (about %s a day; changes are then seen that much later without push)",
			r, count(estimateDay(c, n, false).Total())))
	} else {
		fixes = append(fixes, fmt.Sprintf("a longer CALENDAR_RESYNC_INTERVAL (at most %v)", config.MaxResync))
	}
	fixes = append(fixes, "GOOGLE_IMPERSONATE=true or people connecting their own accounts (GOOGLE_OAUTH_CLIENT_JSON, /meetingbot connect), "+
		"so that the calls spread over per-user quotas, and those of connected accounts over their OAuth client's project when it is another")
	return fixes
}

// fitResync returns the shortest resync interval, in whole minutes up to
// config.MaxResync, that keeps n calendars' day under warnAt of
// threshold, when it is longer than cfg's.
func fitResync(cfg config.Config, n int, threshold float64) (time.Duration, bool) {
	for r := time.Minute; r <= config.MaxResync; r += time.Minute {
		if r <= cfg.ResyncInterval {
			continue
		}
		c := cfg
		c.ResyncInterval = r
		if estimateDay(c, n, false).Total() <= warnAt*threshold {
			return r, true
		}
	}
	return 0, false
}

// run projects the day every projectEvery until ctx ends.
func (s *spend) run(ctx context.Context) {
	var mu sync.Mutex
	var t clock.Timer
	var next func()
	next = func() {
		if ctx.Err() != nil {
			return
		}
		s.measure(ctx)
		mu.Lock()
		defer mu.Unlock()
		t = s.clock.AfterFunc(projectEvery, next)
	}
	mu.Lock()
	t = s.clock.AfterFunc(projectEvery, next)
	mu.Unlock()
	<-ctx.Done()
	mu.Lock()
	defer mu.Unlock()
	t.Stop()
}

// calendarsOf says "1 calendar" or "n calendars".
func calendarsOf(n int) string {
	if n == 1 {
		return "1 calendar"
	}
	return fmt.Sprintf("%d calendars", n)
}

// count writes n rounded, with thousands separated by commas.
func count(n float64) string {
	s := fmt.Sprintf("%.0f", math.Round(n))
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
