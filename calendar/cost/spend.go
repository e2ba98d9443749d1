package cost

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

// Assumptions of the projection from the configuration, per calendar and
// day: a working day of meetings (6 to 10 in working hours), and with push
// a notification's sync for every other one of them changing.
const (
	assumedMeetings = 8
	assumedChanges  = 4
)

// WarnAt is the share of the threshold past which the projection warns.
const WarnAt = 0.8

// projectEvery is how often the day is projected again from the requests
// made.
const projectEvery = time.Hour

// Day is a day of Calendar requests, by what each is for.
type Day struct {
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
func (c Day) Total() float64 { return c.Resyncs + c.Checks + c.Full + c.Changes + c.Channels }

// PerCalendar is the day's requests of one calendar.
func (c Day) PerCalendar() float64 {
	if c.Calendars == 0 {
		return 0
	}
	return c.Total() / float64(c.Calendars)
}

// Estimate projects the Calendar requests of a day of n calendars under
// cfg, with push as cfg has it, or with it on when push is set.
func Estimate(cfg config.Config, n int, push bool) Day {
	day := 24 * time.Hour
	resync := cfg.ResyncInterval
	if push && cfg.PublicURL == "" {
		resync = config.DefaultResyncPush
	}
	tick := cfg.TickInterval
	if resync <= 0 || tick <= 0 {
		return Day{Calendars: n}
	}
	// A sweep, every tick, syncs a calendar whose last sync is as old as
	// mirror.Options.stale says: every whole number of ticks past it.
	stale := max(resync-tick*9/10, resync*9/10)
	period := tick * time.Duration(math.Ceil(float64(stale)/float64(tick)))
	c := Day{
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

// Spend counts the Calendar requests made and projects the day's against
// CALENDAR_DAILY_REQUEST_THRESHOLD: at start-up from the configuration,
// then every projectEvery from what was made, on mon's gauges and in the
// log, which warns once when the projection passes WarnAt of the
// threshold and says so again when it falls back.
type Spend struct {
	cfg   config.Config
	clock clock.Clock
	mon   *monitor.Monitor
	log   *slog.Logger

	made atomic.Int64 // Calendar requests since start

	mu        sync.Mutex
	began     time.Duration // on the elapsed clock
	hourMade  int64         // made when the last projection was
	hourBegan time.Duration
	over      bool
}

// NewSpend returns a Spend counting from now. It is made before the
// Calendar client, whose calls it counts (Observe); the calendars it
// projects for are given to StartUp and Run.
func NewSpend(cfg config.Config, clk clock.Clock, mon *monitor.Monitor, log *slog.Logger) *Spend {
	now := clk.Elapsed()
	return &Spend{cfg: cfg, clock: clk, mon: mon, log: log, began: now, hourBegan: now}
}

// Calendars lists the calendars subscribed now.
type Calendars func(ctx context.Context) ([]string, error)

// Observe counts one Calendar API attempt, whatever its outcome: Google
// counts the requests it answers. It fits calendar.Config.Observe, and
// passes the call on to next when set.
func (s *Spend) Observe(next func(call string, class retry.Class)) func(call string, class retry.Class) {
	return func(call string, class retry.Class) {
		s.made.Add(1)
		if next != nil {
			next(call, class)
		}
	}
}

// StartUp projects the day from the configuration and the calendars
// subscribed now.
func (s *Spend) StartUp(ctx context.Context, calendars Calendars) {
	cals, err := calendars(ctx)
	if err != nil {
		return // the store's trouble, said by its other readers
	}
	est := Estimate(s.cfg, len(cals), false)
	msg := fmt.Sprintf("Calendar requests a day, projected from the configuration: about %s for %s (%s each: %s)",
		Count(est.Total()), CalendarsOf(est.Calendars), Count(est.PerCalendar()), Breakdown(est))
	if s.cfg.PublicURL == "" && est.Calendars > 0 {
		push := Estimate(s.cfg, len(cals), true)
		msg += fmt.Sprintf("; without push notifications each calendar costs a sync every CALENDAR_RESYNC_INTERVAL (%v), where with PUBLIC_URL it would cost about %s a day",
			s.cfg.ResyncInterval, Count(push.PerCalendar()))
	}
	s.report(est.Total(), msg, est.Calendars, "configuration")
}

// Breakdown says what a day's requests are for.
func Breakdown(c Day) string {
	n := float64(max(c.Calendars, 1))
	parts := []string{fmt.Sprintf("%s resyncs", Count(c.Resyncs/n)), fmt.Sprintf("%s checks before reminders", Count(c.Checks/n)), fmt.Sprintf("%s full sync", Count(c.Full/n))}
	if c.Changes > 0 || c.Channels > 0 {
		parts = append(parts, fmt.Sprintf("%s syncs on notifications", Count(c.Changes/n)), fmt.Sprintf("%.2f channel renewals and stops", c.Channels/n))
	}
	return strings.Join(parts, ", ")
}

// measure projects the day from the requests made: the last hour's, or
// the average since start, whichever is more, times a day.
func (s *Spend) measure(ctx context.Context, calendars Calendars) {
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
	cals, err := calendars(ctx)
	if err != nil {
		cals = nil
	}
	msg := fmt.Sprintf("Calendar requests a day, projected from those made: about %s (%d in the last %v, %d in %v since start)",
		Count(max(recent, average)), hour, hourSpan.Round(time.Second), total, span.Round(time.Second))
	s.report(max(recent, average), msg, len(cals), "measured")
}

// report sets the gauges and logs the projection: at WARN with the fixes
// when it passes WarnAt of the threshold, at INFO otherwise.
func (s *Spend) report(requests float64, msg string, calendars int, basis string) {
	threshold := float64(s.cfg.CalendarDailyThreshold)
	if threshold <= 0 {
		threshold = config.DefaultDailyRequestThreshold
	}
	ratio := requests / threshold
	s.mon.CalendarDailyProjection(requests, ratio)
	s.mu.Lock()
	was := s.over
	s.over = ratio > WarnAt
	s.mu.Unlock()
	msg += fmt.Sprintf(", %.1f%% of CALENDAR_DAILY_REQUEST_THRESHOLD (%s)", 100*ratio, Count(threshold))
	attrs := []any{"requests", math.Round(requests), "ratio", math.Round(ratio*1000) / 1000, "threshold", s.cfg.CalendarDailyThreshold, "calendars", calendars, "basis", basis}
	switch {
	case ratio > WarnAt && !was:
		s.log.Warn(msg+": past 80%, and past 100% Google bills the project. Fixes: "+strings.Join(Fixes(s.cfg, calendars, threshold), "; "), attrs...)
	case ratio <= WarnAt && was:
		s.log.Info(msg+": back under 80%", attrs...)
	default:
		s.log.Info(msg, attrs...)
	}
}

// Fixes says what brings n calendars' day under WarnAt of threshold.
func Fixes(cfg config.Config, n int, threshold float64) []string {
	var fixes []string
	if cfg.PublicURL == "" {
		push := Estimate(cfg, n, true)
		fixes = append(fixes, fmt.Sprintf("turn push notifications on with PUBLIC_URL (a calendar is read when it changes and resynced every %v: about %s requests a day for %s)",
			config.DefaultResyncPush, Count(push.Total()), CalendarsOf(n)))
	}
	if r, ok := fitResync(cfg, n, threshold); ok {
		c := cfg
		c.ResyncInterval = r
		fixes = append(fixes, fmt.Sprintf("a longer CALENDAR_RESYNC_INTERVAL, e.g. CALENDAR_RESYNC_INTERVAL=%v (about %s a day; changes are then seen that much later without push)",
			r, Count(Estimate(c, n, false).Total())))
	} else {
		fixes = append(fixes, fmt.Sprintf("a longer CALENDAR_RESYNC_INTERVAL (at most %v)", config.MaxResync))
	}
	fixes = append(fixes, "GOOGLE_IMPERSONATE=true or people connecting their own accounts (GOOGLE_OAUTH_CLIENT_JSON, /meetingbot connect), "+
		"so that the calls spread over per-user quotas, and those of connected accounts over their OAuth client's project when it is another")
	return fixes
}

// fitResync returns the shortest resync interval, in whole minutes up to
// config.MaxResync, that keeps n calendars' day under WarnAt of
// threshold, when it is longer than cfg's.
func fitResync(cfg config.Config, n int, threshold float64) (time.Duration, bool) {
	for r := time.Minute; r <= config.MaxResync; r += time.Minute {
		if r <= cfg.ResyncInterval {
			continue
		}
		c := cfg
		c.ResyncInterval = r
		if Estimate(c, n, false).Total() <= WarnAt*threshold {
			return r, true
		}
	}
	return 0, false
}

// Run projects the day every projectEvery until ctx ends.
func (s *Spend) Run(ctx context.Context, calendars Calendars) {
	var mu sync.Mutex
	var t clock.Timer
	var next func()
	next = func() {
		if ctx.Err() != nil {
			return
		}
		s.measure(ctx, calendars)
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

// CalendarsOf says "1 calendar" or "n calendars".
func CalendarsOf(n int) string {
	if n == 1 {
		return "1 calendar"
	}
	return fmt.Sprintf("%d calendars", n)
}

// Count writes n rounded, with thousands separated by commas.
func Count(n float64) string {
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
