// Package monitor watches the scheduler for an operator: it implements
// scheduler.Observer, keeps Prometheus metrics on a registry of its own, and
// serves /healthz, which answers 503 naming the subscription, since when and
// its last error when any subscription has gone three tick intervals without
// a complete sweep, or the ledger when ticks have failed that long, and
// lists the subscriptions whose Slack destination is refused for good; and
// /metrics in the Prometheus text format.
package monitor

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/retry"
)

// StaleAfter is how many tick intervals a subscription may go without a
// complete sweep before /healthz fails.
const StaleAfter = 3

// Options configure a Monitor.
type Options struct {
	// Subscriptions are the subscriptions the scheduler sweeps; each must
	// sweep to stay healthy.
	Subscriptions []meetingbot.Subscription
	// Interval is the scheduler's tick interval.
	Interval time.Duration
	// Now is the clock; time.Now if nil.
	Now func() time.Time
}

// Monitor records what the scheduler does. Its methods are safe for
// concurrent use. Create it with New.
type Monitor struct {
	opts    Options
	metrics *metrics
	dest    *destinations

	mu   sync.Mutex
	subs map[string]*subHealth
	// ledger is the ticks' record: a tick fails only when the ledger
	// cannot be read or written.
	ledger subHealth
	// leases is this replica's share, with several replicas.
	leases *leases
	// push counts the mirror's syncs, notifications and channels.
	push *pushMetrics
	// quota says how the Calendar quota holds.
	quota *quotaMetrics
	// stale counts the sweeps from a calendar's last reading.
	stale *staleMetrics
	// slack counts the refusals of Slack's request URLs.
	slack *slackMetrics
	// posting says what Slack's posting budget does to reminders.
	posting *postingMetrics
	// timers counts the durable timers (timers.go).
	timers *timerMetrics
}

// subHealth is one subscription's sweep record.
type subHealth struct {
	lastGood     time.Time // last complete sweep, or the monitor's start
	swept        bool      // a sweep completed at least once
	failingSince time.Time // first failed sweep since lastGood; zero when fine
	lastErr      string
}

// New returns a Monitor for opts. Every subscription counts as healthy from
// this moment for StaleAfter intervals.
func New(opts Options) *Monitor {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	start := opts.Now()
	m := &Monitor{opts: opts, metrics: newMetrics(), subs: map[string]*subHealth{}, ledger: subHealth{lastGood: start}}
	m.dest = newDestinations(m.metrics.reg, opts.Subscriptions)
	m.leases = newLeases(m.metrics.reg, len(opts.Subscriptions))
	m.push = newPushMetrics(m.metrics.reg)
	m.quota = newQuotaMetrics(m.metrics.reg)
	m.stale = newStaleMetrics(m.metrics.reg)
	m.slack = newSlackMetrics(m.metrics.reg)
	m.posting = newPostingMetrics(m.metrics.reg)
	m.timers = newTimerMetrics(m.metrics.reg)
	for _, s := range opts.Subscriptions {
		m.subs[s.ID] = &subHealth{lastGood: start}
	}
	m.metrics.subscriptions.Set(float64(len(opts.Subscriptions)))
	m.metrics.tickInterval.Set(opts.Interval.Seconds())
	return m
}

// Recorded counts a ledger outcome: sent (and how late), skipped by reason
// code, failed by class.
func (m *Monitor) Recorded(e meetingbot.Entry) {
	switch e.Outcome {
	case meetingbot.Sent:
		m.metrics.sent.Inc()
		if e.Late {
			m.metrics.late.Inc()
		}
		if !e.RecordedAt.IsZero() && !e.TriggerAt.IsZero() {
			m.metrics.lateness.Observe(max(0, e.RecordedAt.Sub(e.TriggerAt).Seconds()))
			if ahead := e.TriggerAt.Sub(e.RecordedAt); ahead > 0 {
				m.PostedAhead(ahead) // a crowd posted ahead of its trigger (scheduler/early.go)
			}
		}
	case meetingbot.Skipped:
		m.metrics.skipped.WithLabelValues(skipLabel(e.Code)).Inc()
	case meetingbot.Failed:
		class := "permanent"
		if e.Retryable {
			class = "transient"
		}
		m.metrics.failed.WithLabelValues(class).Inc()
	}
}

// RecordedAgenda counts a daily agenda's outcome recorded in the ledger
// (meetingbot_agendas_total).
func (m *Monitor) RecordedAgenda(e meetingbot.Entry) {
	outcome := "failed_transient"
	switch {
	case e.Outcome == meetingbot.Sent && e.Late:
		outcome = "late"
	case e.Outcome == meetingbot.Sent:
		outcome = "sent"
	case e.Outcome == meetingbot.Skipped && e.Code == meetingbot.ReasonAfterNoon:
		outcome = "after_noon"
	case e.Outcome == meetingbot.Skipped && e.Code == meetingbot.ReasonAgendaOff:
		outcome = "agenda_off"
	case e.Outcome == meetingbot.Skipped:
		outcome = "no_meetings"
	case e.Outcome == meetingbot.Failed && !e.Retryable:
		outcome = "failed_permanent"
	}
	m.metrics.agendas.WithLabelValues(outcome).Inc()
}

// Swept records one subscription's sweep: a nil err means it completed.
func (m *Monitor) Swept(sub meetingbot.Subscription, now time.Time, took time.Duration, err error) {
	m.metrics.sweepDuration.Observe(took.Seconds())
	m.stale.swept(sub.ID, err)
	at := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.subs[sub.ID]
	if h == nil {
		h = &subHealth{lastGood: at}
		m.subs[sub.ID] = h
	}
	if h.record(at, err) {
		m.metrics.lastSuccess.WithLabelValues(sub.ID).Set(float64(at.UnixMilli()) / 1000)
	}
}

// record notes a sweep or a tick ending at at with err, and reports
// whether it completed.
func (h *subHealth) record(at time.Time, err error) bool {
	if err == nil {
		h.lastGood, h.swept, h.failingSince, h.lastErr = at, true, time.Time{}, ""
		return true
	}
	if h.failingSince.IsZero() {
		h.failingSince = at
	}
	h.lastErr = err.Error()
	return false
}

// Planned records how many reminders are armed on timers.
func (m *Monitor) Planned(armed int) { m.metrics.timersArmed.Set(float64(armed)) }

// Checked counts a check of a meeting just before its planned reminder.
func (m *Monitor) Checked(outcome meetingbot.CheckOutcome) {
	m.metrics.checks.WithLabelValues(string(outcome)).Inc()
}

// Edited counts an edit of a sent reminder whose meeting changed, by its
// kind: moved, cancelled, declined or restored.
func (m *Monitor) Edited(e meetingbot.Entry) {
	if e.Edit.Kind != meetingbot.NotEdited {
		m.metrics.edits.WithLabelValues(string(e.Edit.Kind)).Inc()
	}
}

// Reading records how many calendar reads are in flight.
func (m *Monitor) Reading(inFlight int) { m.metrics.readsInFlight.Set(float64(inFlight)) }

// ObserveQuotaWait counts time a Calendar call waited for the quota
// budget; its signature fits calendar.Config.QuotaWait.
func (m *Monitor) ObserveQuotaWait(call string, waited time.Duration) {
	if waited > 0 {
		m.metrics.quotaWait.WithLabelValues(call).Add(waited.Seconds())
	}
}

// Ticked records how long a tick took and whether it failed: a tick fails
// when the ledger cannot be read or written (a full disk, a read-only
// file), even while every subscription sweeps and nothing is due.
func (m *Monitor) Ticked(now time.Time, took time.Duration, err error) {
	m.metrics.tickDuration.Observe(took.Seconds())
	at := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ledger.record(at, err)
}

// ObserveCalendar counts one Google Calendar API attempt; its signature
// fits calendar.Config.Observe.
func (m *Monitor) ObserveCalendar(call string, class retry.Class) {
	m.metrics.calendarCalls.WithLabelValues(call, string(class)).Inc()
	if class != retry.OK {
		m.metrics.calendarErrs.WithLabelValues(call, string(class)).Inc()
	}
}

// ObserveSlack counts one Slack Web API attempt; its signature fits
// notify.Config.Observe.
func (m *Monitor) ObserveSlack(call string, class retry.Class) {
	m.metrics.slackCalls.WithLabelValues(call, string(class)).Inc()
	if class != retry.OK {
		m.metrics.slackErrs.WithLabelValues(call, string(class)).Inc()
	}
}

// Counter counts ledger rows; *sqlite.Store provides it.
type Counter interface {
	Count(ctx context.Context) (int64, error)
}

// TrackLedger refreshes the ledger rows gauge from c at once and then every
// period, until ctx ends. A failed count keeps the last value.
func (m *Monitor) TrackLedger(ctx context.Context, c Counter, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if n, err := c.Count(ctx); err == nil {
			m.metrics.ledgerRows.Set(float64(n))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Unhealthy returns one line for a database that has not answered this
// replica's lease renewals for more than StaleAfter intervals (with
// several replicas), one for a ledger whose ticks have failed that long,
// and one per subscription (of those this replica holds) that has gone
// more than StaleAfter intervals without a complete sweep, each saying
// since when and its last error; none when all is well.
func (m *Monitor) Unhealthy() []string {
	store, subs := m.unhealthy()
	return append(store, subs...)
}

// unhealthy returns Unhealthy's database and ledger lines, and its
// subscription lines.
func (m *Monitor) unhealthy() (store, subs []string) {
	now := m.opts.Now()
	limit := StaleAfter * m.opts.Interval
	m.mu.Lock()
	defer m.mu.Unlock()
	if line := m.leases.unhealthy(now, limit); line != "" {
		store = append(store, line)
	}
	if h := m.ledger; !h.failingSince.IsZero() && now.Sub(h.lastGood) > limit {
		since := "no complete tick since start-up at " + h.lastGood.UTC().Format(time.RFC3339)
		if h.swept {
			since = "last complete tick at " + h.lastGood.UTC().Format(time.RFC3339)
		}
		store = append(store, fmt.Sprintf("ledger: %s (%s ago, more than %d ticks of %v); failing since %s; last error: %s",
			since, now.Sub(h.lastGood).Round(time.Second), StaleAfter, m.opts.Interval, h.failingSince.UTC().Format(time.RFC3339), h.lastErr))
	}
	var out []string
	for id, h := range m.subs {
		age := now.Sub(h.lastGood)
		if age <= limit || m.leases.skips(id) {
			continue
		}
		since := "no complete sweep since start-up at " + h.lastGood.UTC().Format(time.RFC3339)
		if h.swept {
			since = "last complete sweep at " + h.lastGood.UTC().Format(time.RFC3339)
		}
		line := fmt.Sprintf("subscription %s: %s (%s ago, more than %d ticks of %v)",
			id, since, age.Round(time.Second), StaleAfter, m.opts.Interval)
		if !h.failingSince.IsZero() {
			line += fmt.Sprintf("; failing since %s; last error: %s", h.failingSince.UTC().Format(time.RFC3339), h.lastErr)
		} else {
			line += "; no sweep finished since (is the scheduler or the ledger stuck?)"
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return store, out
}

// Registerer returns the registry /metrics serves, for collectors kept
// elsewhere (the audit watcher's gauges).
func (m *Monitor) Registerer() prometheus.Registerer { return m.metrics.reg }

// Handler serves /healthz, naming each failing subscription and its
// error, and /metrics, labelled by subscription: both belong on a private
// listener, or on the only one when the bot is not reachable from outside.
func (m *Monitor) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", m.serveHealth)
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.metrics.reg, promhttp.HandlerOpts{Registry: m.metrics.reg}))
	return mux
}

// PublicHandler serves a /healthz that names nothing, for a listener
// anyone may reach: 200 "ok", or 503 with how many subscriptions fail
// (and whether the ledger does). Handler, on a private listener, says
// which and why.
func (m *Monitor) PublicHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		store, subs := m.unhealthy()
		if len(store) == 0 && len(subs) == 0 {
			fmt.Fprintln(w, "ok")
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		line := fmt.Sprintf("unhealthy: %d of %d subscriptions failing", len(subs), m.count())
		if len(store) > 0 {
			line += "; the ledger is failing"
		}
		fmt.Fprintln(w, line)
	})
	return mux
}

func (m *Monitor) serveHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	// A destination Slack refuses is listed but keeps the answer 200: one
	// person leaving must not fail every deploy's health check.
	attention := ""
	if bad := m.Unreachable(); len(bad) > 0 {
		attention = fmt.Sprintf("attention: %d of %d subscriptions cannot reach their Slack destination; their reminders fail until it is fixed, the others run\n%s\n",
			len(bad), m.count(), strings.Join(bad, "\n"))
	}
	m.mu.Lock()
	leases := m.leases.summary(m.opts.Now())
	m.mu.Unlock()
	if store, subs := m.unhealthy(); len(store) > 0 || len(subs) > 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
		head := fmt.Sprintf("%d of %d subscriptions not swept", len(subs), m.count())
		if len(store) > 0 {
			head += "; the ledger is failing"
		}
		fmt.Fprintf(w, "unhealthy: %s\n%s%s\n%s", head, leases, strings.Join(append(store, subs...), "\n"), attention)
		return
	}
	fmt.Fprintf(w, "ok: %d subscriptions swept within the last %d ticks of %v\n%s%s", m.count(), StaleAfter, m.opts.Interval, leases, attention)
}

// count returns the number of subscriptions /healthz judges: those this
// replica holds, with several.
func (m *Monitor) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.leases.on {
		return len(m.leases.ids)
	}
	return len(m.subs)
}
