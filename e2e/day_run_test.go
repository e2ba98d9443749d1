package e2e

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/daemon"
	"github.com/meetingbot/meetingbot/internal/logger"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// dayConfig is one simulated day's setting.
type dayConfig struct {
	Subs int
	Push bool
	Seed uint64
	// Resync is CALENDAR_RESYNC_INTERVAL; "" keeps the bot's default.
	Resync string
	// Span is how long the simulated day is: 24h but in the smoke test.
	Span time.Duration
	// Latency is every Calendar and Slack call's.
	Latency time.Duration
	// Log, if set, is the file the bot logs to, at LOG_LEVEL (warn if
	// empty).
	Log, LogLevel string
}

// dayResult is what a simulated day measured. Durations are of the
// bubble's fake time.
type dayResult struct {
	Config dayConfig
	// Calendar API requests by method (events.list, events.get,
	// events.instances, events.watch, channels.stop), and token
	// requests apart.
	Calendar map[string]int
	Token    int
	// Slack Web API calls by method.
	Slack map[string]int
	// The reminders the day's meetings were due; those posted, missed
	// (never posted), duplicated (posted again), late (posted more than
	// 1 s after their trigger, or after the meeting came to the calendar
	// when that was later), and stray (posted for a meeting cancelled or
	// moved away before its trigger).
	Due, Posted, Missed, Dup, Late, Stray int
	MaxLate                               time.Duration
	// LateBy counts the late reminders by how late: up to 2 s, 10 s,
	// 1 minute, and more.
	LateBy [4]int
	// Worst are the latest reminders and the missed ones, a line each.
	Worst []string
	// The changes made during the day, and how soon the bot read each
	// (see seenTracker): ChangeLate of them more than 2 s after their
	// notification was delivered; Lost whose notifications were all lost
	// (LostMax the longest from the change to its reading); NoChannel made
	// while their calendar had no live channel; Outage whose notification
	// came while the Calendar was down (OutageMax as LostMax); Unseen
	// never read. ChangeMax is the longest from a change to its reading,
	// Lost and Outage ones apart. Without push ChangeLate, Lost and
	// NoChannel are not measured, and Outage are the changes made from a
	// resync interval before the outage to its end.
	Changes, ChangeLate, Lost, NoChannel, Outage, Unseen int
	ChangeMax, LostMax, OutageMax                        time.Duration
	// Notifications sent, and lost on purpose.
	Notifications, Dropped int
	// ServeErr says what broke the run: what serve returned, if anything,
	// or a change the emulator refused.
	ServeErr string
}

// Names of the simulated day's fixed parts.
const (
	dayPublicURL = "https://bot.day.example"
	// dayBotURL is where the emulator posts the notifications, behind
	// the "proxy" that ends TLS: the bot's in-memory listener.
	dayBotURL = "http://bot.internal"
	// dayLost is the share of notifications lost.
	dayLost = 0.01
	// dayOutage is how long the Calendar is down, from 19/32 of the span
	// (14:15 of a 24-hour day).
	dayOutage = 10 * time.Minute
)

// runDay runs one simulated day; it must be called inside a synctest
// bubble (synctest.Test), whose fake clock it runs on from its time.Now.
// It fails t only when the wiring is broken.
func runDay(t testing.TB, cfg dayConfig) dayResult {
	t0 := time.Now()
	plan, err := planDay(cfg.Subs, cfg.Seed, t0, cfg.Span)
	if err != nil {
		t.Fatal(err)
	}
	cal, slack := calendartest.NewInProcess(), slacktest.NewInProcess()
	cal.SetLatency(cfg.Latency)
	slack.SetLatency(cfg.Latency)
	users := make([]slacktest.User, len(plan.emails))
	for i, email := range plan.emails {
		users[i] = slacktest.User{ID: fmt.Sprintf("U%08d", i), Name: fmt.Sprint("p", i), Email: email}
		cal.AddCalendar(email)
		cal.Share(email, email) // read as its owner: domain-wide delegation
	}
	slack.AddUsers(users...)
	for email, evs := range plan.before {
		for _, ev := range evs {
			if err := cal.Put(email, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	outageFrom := t0.Add(cfg.Span * 19 / 32)
	cal.SetOutage(outageFrom, outageFrom.Add(dayOutage))

	ln := newMemListener()
	notifyTransport := &http.Transport{DialContext: ln.dial}
	cal.SetNotifyClient(&http.Client{Transport: notifyTransport, Timeout: 10 * time.Second})
	cal.ForwardNotifications(dayPublicURL, dayBotURL)
	cal.LoseNotifications(dayLost, cfg.Seed)
	seen := &seenTracker{next: cal.Client().Transport, pending: map[string][]*trackedChange{}}
	slackCalls := &callCounter{next: slack.Client().Transport, prefix: "/api/", calls: map[string]int{}}

	dir := t.TempDir()
	env := map[string]string{
		"SLACK_BOT_TOKEN":         slacktest.Token,
		"SLACK_API_URL":           slack.URL(),
		"GOOGLE_CREDENTIALS_JSON": string(cal.ServiceAccountJSON()),
		"GOOGLE_API_ENDPOINT":     cal.Endpoint(),
		"GOOGLE_IMPERSONATE":      "true",
		"CALENDARS":               strings.Join(plan.emails, ","),
		"DATABASE_PATH":           filepath.Join(dir, "reminders.db"),
		"HTTP_ADDR":               "127.0.0.1:8080",
		"LOG_LEVEL":               cmp.Or(cfg.LogLevel, "warn"),
		"LOG_FORMAT":              "text",
	}
	if cfg.Push {
		env["PUBLIC_URL"] = dayPublicURL
	}
	if cfg.Resync != "" {
		env["CALENDAR_RESYNC_INTERVAL"] = cfg.Resync
	}
	conf, err := config.Parse(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	var logw io.Writer = io.Discard
	if cfg.Log != "" {
		f, err := os.Create(cfg.Log)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		logw = f
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := logger.New(conf.LogLevel, conf.LogFormat, logw)
	if cfg.Log != "" {
		// A line each simulated hour, among the bot's: how far the day
		// is, as the file's writes tell the real time.
		go func() {
			for h := time.Hour; h < cfg.Span; h += time.Hour {
				select {
				case <-time.After(time.Until(t0.Add(h))):
					log.Warn("simulated day: another hour", "hours", h.Hours())
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	served := make(chan error, 1)
	go func() {
		b, err := daemon.New(ctx, conf, daemon.Options{
			Logger:       log,
			Listen:       ln.listen,
			CalendarHTTP: &http.Client{Transport: seen},
			SlackHTTP:    &http.Client{Transport: slackCalls},
		})
		if err != nil {
			served <- err
			return
		}
		defer b.Close()
		served <- b.Run(ctx)
	}()

	var r dayResult
	tracked := make([]*trackedChange, 0, len(plan.changes))
	for _, c := range plan.changes {
		time.Sleep(time.Until(c.at))
		tc := &trackedChange{dayChange: c}
		seen.add(tc) // before the change: the bot may read it at once
		switch c.kind {
		case changeCancel:
			err = cal.Delete(c.calendar, c.id)
		default:
			err = cal.Put(c.calendar, c.ev)
		}
		if err != nil {
			r.ServeErr = fmt.Sprintf("the emulator refused the day's %s of %s in %s: %v", c.kind, c.id, c.calendar, err)
			break
		}
		tracked = append(tracked, tc)
	}
	time.Sleep(time.Until(t0.Add(cfg.Span)))
	select {
	case err := <-served:
		r.ServeErr = fmt.Sprint("the bot stopped before the end of the day: ", err)
	default:
		cancel()
		if err := <-served; err != nil && r.ServeErr == "" {
			r.ServeErr = "the bot stopped with an error: " + err.Error()
		}
	}
	cal.Close()
	slack.Close()
	notifyTransport.CloseIdleConnections()

	r.Config = cfg
	r.Calendar = map[string]int{}
	for _, m := range []string{calendartest.MethodList, calendartest.MethodGet, calendartest.MethodInstances, calendartest.MethodPatch, calendartest.MethodWatch, calendartest.MethodStop} {
		if n := cal.RequestsTo(m); n > 0 {
			r.Calendar[m] = n
		}
	}
	r.Token = cal.TokenRequests()
	r.Slack = slackCalls.counts()
	r.reminders(plan, slack.Messages())
	r.changes(tracked, cal.Deliveries(), outageFrom, cfg.Push, conf.ResyncInterval)
	return r
}

// reminders measures the reminders the day's meetings were due against
// the messages posted.
func (r *dayResult) reminders(plan *dayPlan, msgs []slacktest.Message) {
	type key struct{ id, start string }
	keyOf := func(id string, start time.Time) key { return key{id, start.UTC().Format(time.RFC3339)} }
	due, beyond := map[key]dayMeeting{}, map[key]bool{}
	for _, m := range plan.meetings {
		switch {
		case m.cancelled:
		case m.beyond:
			beyond[keyOf(m.id, m.start)] = true
		default:
			due[keyOf(m.id, m.start)] = m
		}
	}
	posts := map[key][]time.Time{}
	for _, m := range msgs {
		if m.Metadata == nil || m.Metadata.EventType != "meeting_reminder" {
			continue
		}
		entries := []map[string]any{m.Metadata.EventPayload}
		if list, ok := m.Metadata.EventPayload["reminders"].([]any); ok {
			entries = entries[:0] // a digest lists its first reminder again
			for _, e := range list {
				if p, ok := e.(map[string]any); ok {
					entries = append(entries, p)
				}
			}
		}
		for _, e := range entries {
			id, _ := e["event_id"].(string)
			start, _ := e["start"].(string)
			k := key{id, start}
			if _, ok := due[k]; !ok {
				if !beyond[k] {
					r.Stray++
				}
				continue
			}
			posts[k] = append(posts[k], m.Posted)
		}
	}
	r.Due = len(due)
	type worst struct {
		late time.Duration
		line string
	}
	var ws []worst
	for k, m := range due {
		what := fmt.Sprintf("%s at %s (trigger %s", k.id, m.start.UTC().Format("15:04"), m.trigger().UTC().Format("15:04:05"))
		if !m.since.IsZero() {
			what += fmt.Sprintf(", in the calendar since %s", m.since.UTC().Format("15:04:05"))
		}
		ps := posts[k]
		if len(ps) == 0 {
			r.Missed++
			ws = append(ws, worst{math.MaxInt64, what + "): missed"})
			continue
		}
		r.Posted++
		r.Dup += len(ps) - 1
		late := slices.MinFunc(ps, time.Time.Compare).Sub(m.trigger())
		r.MaxLate = max(r.MaxLate, late)
		if late > time.Second {
			r.Late++
			r.LateBy[min(3, sort.Search(3, func(i int) bool { return late <= [...]time.Duration{2 * time.Second, 10 * time.Second, time.Minute}[i] }))]++
			ws = append(ws, worst{late, fmt.Sprintf("%s): %.1f s late", what, late.Seconds())})
		}
	}
	slices.SortFunc(ws, func(a, b worst) int { return cmp.Or(cmp.Compare(b.late, a.late), strings.Compare(a.line, b.line)) })
	for _, w := range ws[:min(len(ws), 10)] {
		r.Worst = append(r.Worst, w.line)
	}
}

// changes measures how soon the bot read each change, against its
// notification with push.
// Without push a change is read at its calendar's next resync, every
// resync.
func (r *dayResult) changes(tracked []*trackedChange, deliveries []calendartest.Delivery, outageFrom time.Time, push bool, resync time.Duration) {
	type instant struct {
		calendar string
		at       int64
	}
	own := map[instant][]calendartest.Delivery{}
	for _, d := range deliveries {
		r.Notifications++
		if d.Err == "dropped" {
			r.Dropped++
		}
		if d.State == "exists" {
			k := instant{d.CalendarID, d.Queued.UnixNano()}
			own[k] = append(own[k], d)
		}
	}
	r.Changes = len(tracked)
	for _, c := range tracked {
		if c.seen.IsZero() {
			r.Unseen++
			continue
		}
		if !push {
			// Read at a resync, or after the outage when the outage
			// came before that.
			if !c.at.Before(outageFrom.Add(-resync)) && c.at.Before(outageFrom.Add(dayOutage)) {
				r.Outage++
				r.OutageMax = max(r.OutageMax, c.seen.Sub(c.at))
				continue
			}
			r.ChangeMax = max(r.ChangeMax, c.seen.Sub(c.at))
			continue
		}
		ds := own[instant{c.calendar, c.at.UnixNano()}]
		if len(ds) == 0 {
			r.NoChannel++
			r.ChangeMax = max(r.ChangeMax, c.seen.Sub(c.at))
			continue
		}
		var delivered time.Time
		for _, d := range ds {
			if d.Err == "" && d.Status == http.StatusOK && (delivered.IsZero() || d.At.Before(delivered)) {
				delivered = d.At
			}
		}
		switch {
		case delivered.IsZero():
			r.Lost++
			r.LostMax = max(r.LostMax, c.seen.Sub(c.at))
		case !delivered.Before(outageFrom.Add(-2*time.Second)) && delivered.Before(outageFrom.Add(dayOutage)):
			r.Outage++
			r.OutageMax = max(r.OutageMax, c.seen.Sub(c.at))
		default:
			if c.seen.Sub(delivered) > 2*time.Second {
				r.ChangeLate++
			}
			r.ChangeMax = max(r.ChangeMax, c.seen.Sub(c.at))
		}
	}
}

// calendarCalls is every Calendar API request of the day, token requests
// left out.
func (r dayResult) calendarCalls() int {
	n := 0
	for _, v := range r.Calendar {
		n += v
	}
	return n
}

func (r dayResult) slackCalls() int {
	n := 0
	for _, v := range r.Slack {
		n += v
	}
	return n
}

// perSubDay is n per subscription-day.
func (r dayResult) perSubDay(n int) float64 {
	return float64(n) / float64(r.Config.Subs) / (r.Config.Span.Hours() / 24)
}

// broken says what shows the wiring broken, "" when nothing does: the
// bot stopped, or posted none of the reminders due.
func (r dayResult) broken() string {
	switch {
	case r.ServeErr != "":
		return r.ServeErr
	case r.Due > 0 && r.Posted == 0:
		return fmt.Sprintf("none of %d reminders due was posted", r.Due)
	case r.calendarCalls() == 0:
		return "the bot made no Calendar call"
	}
	return ""
}

// summary is r in a few lines, for the benchmark's output.
func (r dayResult) summary() string {
	var b strings.Builder
	mode := "push off"
	if r.Config.Push {
		mode = "push on"
	}
	fmt.Fprintf(&b, "day: %s subscriptions, %s, resync %s, %v of fake time\n", thousands(r.Config.Subs), mode, cmp.Or(r.Config.Resync, "default"), r.Config.Span)
	var calls []string
	for _, m := range slices.Sorted(maps.Keys(r.Calendar)) {
		calls = append(calls, fmt.Sprintf("%s %.2f", m, r.perSubDay(r.Calendar[m])))
	}
	fmt.Fprintf(&b, "  Calendar calls per subscription-day: %.1f (%s); token requests %.1f\n", r.perSubDay(r.calendarCalls()), strings.Join(calls, ", "), r.perSubDay(r.Token))
	var slack []string
	for _, m := range slices.Sorted(maps.Keys(r.Slack)) {
		slack = append(slack, fmt.Sprintf("%s %.2f", m, r.perSubDay(r.Slack[m])))
	}
	fmt.Fprintf(&b, "  Slack calls per subscription-day: %.1f (%s)\n", r.perSubDay(r.slackCalls()), strings.Join(slack, ", "))
	fmt.Fprintf(&b, "  reminders due %s: posted %s, missed %d, duplicated %d, late>1s %d (up to 2 s %d, 10 s %d, 1 min %d, more %d; max %.1f s), stray %d\n",
		thousands(r.Due), thousands(r.Posted), r.Missed, r.Dup, r.Late, r.LateBy[0], r.LateBy[1], r.LateBy[2], r.LateBy[3], r.MaxLate.Seconds(), r.Stray)
	fmt.Fprintf(&b, "  changes %s: unseen %d, longest to read %.1f s (the outage's %d apart: %.1f s)", thousands(r.Changes), r.Unseen, r.ChangeMax.Seconds(), r.Outage, r.OutageMax.Seconds())
	if r.Config.Push {
		fmt.Fprintf(&b, "; read >2s after their notification %d; notifications %s, lost %d: changes whose notifications were all lost %d (read within %.1f s); with no live channel %d",
			r.ChangeLate, thousands(r.Notifications), r.Dropped, r.Lost, r.LostMax.Seconds(), r.NoChannel)
	}
	b.WriteString("\n")
	for _, w := range r.Worst {
		fmt.Fprintf(&b, "    %s\n", w)
	}
	return b.String()
}
