package monitor

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/prometheus/client_golang/prometheus"
)

// Posting is what the workspace's posting budget stands at: the pace the
// Slack client posts at now, the posts Slack took in the last minute, the
// posts waiting their turn, and since start-up the 429s posts met and
// the posts the budget could not fit before they were needed.
type Posting struct {
	PerMinute            float64
	Used, Waiting        int
	Refusals, OverBudget int
}

// TrackPosting puts the posting budget on /metrics, read at each scrape.
func (m *Monitor) TrackPosting(read func() Posting) {
	gauge := func(name, help string, v func(Posting) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return v(read()) })
	}
	counter := func(name, help string, v func(Posting) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return v(read()) })
	}
	m.metrics.reg.MustRegister(
		gauge("meetingbot_slack_posting_budget_per_minute", "Posts a minute the bot paces the whole workspace to now (chat.postMessage): SLACK_POSTS_PER_MINUTE, or less for a while after Slack answered 429; 0 with the workspace's pacing off.",
			func(p Posting) float64 { return p.PerMinute }),
		gauge("meetingbot_slack_posts_last_minute", "Posts Slack took in the last minute: the posting budget used.",
			func(p Posting) float64 { return float64(p.Used) }),
		gauge("meetingbot_slack_posts_held", "Posts (reminders, agendas, notices) waiting for their turn in the posting budget now, the meetings that start soonest first.",
			func(p Posting) float64 { return float64(p.Waiting) }),
		counter("meetingbot_slack_posts_rate_limited_total", "Posts Slack answered 429 (its workspace-wide posting limit, or a channel's): each holds every post for its Retry-After.",
			func(p Posting) float64 { return float64(p.Refusals) }),
		counter("meetingbot_slack_posts_over_budget_total", "Posts the posting budget could not fit before they were needed (a reminder before its meeting's start): not sent, retried by the next sweep, and recorded skipped once the meeting started.",
			func(p Posting) float64 { return float64(p.OverBudget) }),
	)
}

// postingMetrics are the reminders posted ahead and the forecast of the
// busiest minute.
type postingMetrics struct {
	ahead    prometheus.Histogram
	busiest  prometheus.Gauge
	busiestR prometheus.Gauge
}

func newPostingMetrics(reg prometheus.Registerer) *postingMetrics {
	p := &postingMetrics{
		ahead: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "meetingbot_reminders_posted_ahead_seconds",
			Help:    "How far ahead of its trigger each reminder posted ahead went: when more fall due together than the posting budget passes by their triggers, at most a quarter of the offset and REMINDER_EARLY_MAX.",
			Buckets: []float64{1, 5, 15, 30, 60, 150, 300, 600},
		}),
		busiest: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "meetingbot_slack_busiest_minute_reminders",
			Help: "Reminders due in the busiest minute of the coming 24 hours, from the calendars' last readings: projected at start-up and every hour.",
		}),
		busiestR: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "meetingbot_slack_busiest_minute_ratio",
			Help: "meetingbot_slack_busiest_minute_reminders over what the posting budget passes by their triggers (SLACK_POSTS_PER_MINUTE for the minute, and for the lead a crowd may be posted ahead): past 1 some are posted after their trigger, and those that cannot go before their meeting starts are not posted; the bot warns, with the fix.",
		}),
	}
	reg.MustRegister(p.ahead, p.busiest, p.busiestR)
	return p
}

// PostedAhead records a reminder posted lead ahead of its trigger.
func (m *Monitor) PostedAhead(lead time.Duration) { m.posting.ahead.Observe(lead.Seconds()) }

// forecastEvery is how often the coming day's busiest minute is projected
// again.
const forecastEvery = time.Hour

// PostingForecast projects, at start-up (from the readings a restart finds
// in the store), five minutes later and then every hour, the busiest minute
// of the coming day's reminders against the posting budget, like the
// Calendar's daily projection, and says once, with the fix, when a minute
// will not fit.
type PostingForecast struct {
	Subscriptions func(ctx context.Context) ([]meetingbot.Subscription, error)
	// Reading is a calendar's meetings as last read, without a call.
	Reading func(ctx context.Context, calendarID string) ([]meetingbot.Meeting, bool, error)
	// PerMinute is SLACK_POSTS_PER_MINUTE (0: not paced, nothing said);
	// Early is REMINDER_EARLY_MAX.
	PerMinute int
	Early     time.Duration
	Now       func() time.Time
	Monitor   *Monitor
	Logger    *slog.Logger

	over bool
}

// Busiest is the busiest minute of a day of reminders.
type Busiest struct {
	Minute    time.Time
	Reminders int
	// Fits is how many the budget passes by their triggers: a minute's
	// worth, and a crowd's lead (the smallest offset's) more.
	Fits float64
}

// Ratio is Reminders over Fits.
func (b Busiest) Ratio() float64 {
	if b.Fits <= 0 {
		return 0
	}
	return float64(b.Reminders) / b.Fits
}

// Project finds the busiest minute of the triggers in [now, now+24h].
func (f *PostingForecast) Project(ctx context.Context) (Busiest, error) {
	subs, err := f.Subscriptions(ctx)
	if err != nil {
		return Busiest{}, err
	}
	now := f.Now()
	end := now.Add(24 * time.Hour)
	count := map[time.Time]int{}
	minOffset := map[time.Time]time.Duration{}
	readings := map[string][]meetingbot.Meeting{}
	for _, sub := range subs {
		if sub.Kind != meetingbot.KindReminder {
			continue
		}
		ms, ok := readings[sub.CalendarID]
		if !ok {
			ms, _, err = f.Reading(ctx, sub.CalendarID)
			if err != nil {
				return Busiest{}, err
			}
			readings[sub.CalendarID] = ms
		}
		for _, m := range ms {
			if sub.Mutes(m) {
				continue
			}
			for _, o := range sub.Offsets {
				at := m.Start.Add(-o)
				if at.Before(now) || at.After(end) {
					continue
				}
				minute := at.Truncate(time.Minute)
				count[minute]++
				if d, seen := minOffset[minute]; !seen || o < d {
					minOffset[minute] = o
				}
			}
		}
	}
	var b Busiest
	for minute, n := range count {
		if n > b.Reminders || n == b.Reminders && minute.Before(b.Minute) {
			lead := min(f.Early, meetingbot.MaxEarly(minOffset[minute]))
			b = Busiest{Minute: minute, Reminders: n, Fits: float64(f.PerMinute) * (1 + lead.Minutes())}
		}
	}
	return b, nil
}

// Check projects the coming day once, keeps the gauges, and says when a
// minute stops or starts fitting.
func (f *PostingForecast) Check(ctx context.Context) {
	if f.PerMinute <= 0 {
		return
	}
	b, err := f.Project(ctx)
	if err != nil {
		return // the store's trouble, said by its other readers
	}
	f.Monitor.posting.busiest.Set(float64(b.Reminders))
	f.Monitor.posting.busiestR.Set(b.Ratio())
	switch over := b.Ratio() > 1; {
	case over && !f.over:
		f.Logger.Warn(f.overBudget(b), "minute", b.Minute, "reminders", b.Reminders, "fit", int(b.Fits), "posts_per_minute", f.PerMinute)
	case !over && f.over:
		f.Logger.Info("the busiest minute of the coming day fits Slack's posting budget again", "minute", b.Minute, "reminders", b.Reminders, "fit", int(b.Fits))
	}
	f.over = b.Ratio() > 1
}

// overBudget says what a minute past the budget costs and what fixes it.
func (f *PostingForecast) overBudget(b Busiest) string {
	late := time.Duration(float64(b.Reminders)-b.Fits) * time.Minute / time.Duration(f.PerMinute)
	return fmt.Sprintf("%d reminders fall due in the minute of %s UTC, more than the %.0f Slack's posting budget passes by their triggers "+
		"(SLACK_POSTS_PER_MINUTE=%d, and posting ahead up to a quarter of the offset and REMINDER_EARLY_MAX=%v): the last would go about %v after its trigger, "+
		"and those that cannot go before their meeting starts are not posted. Fixes: longer offsets, which let a crowd go further ahead (a 10m reminder up to 2m30s); "+
		"a channel subscription for a team's calendar instead of a DM to each member; a larger SLACK_POSTS_PER_MINUTE, if Slack allows the workspace more (its documentation says only \"several hundred messages per minute\")",
		b.Reminders, b.Minute.UTC().Format("15:04"), b.Fits, f.PerMinute, f.Early, late.Round(time.Second))
}

// forecastFirst is when the first projection after start-up's is made:
// on a first start the calendars have no reading yet, and by then each has
// been read.
const forecastFirst = 5 * time.Minute

// Run projects forecastFirst after start-up, then every forecastEvery,
// until ctx ends.
func (f *PostingForecast) Run(ctx context.Context) {
	wait := forecastFirst
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
			f.Check(ctx)
		}
		wait = forecastEvery
	}
}
