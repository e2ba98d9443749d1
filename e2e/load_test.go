package e2e

import (
	"cmp"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
)

// The load benchmark: the bot binary, as a company would run it, against a
// Calendar and a Slack that answer after a real API's latency, with N
// subscriptions whose reminders fall due over a couple of minutes. It
// measures what users notice (how late each reminder is, which never came,
// which came twice) and what the operator pays (Calendar calls, CPU,
// memory). It reports figures and never fails on them: only broken wiring
// (a bot that does not build or start) fails it.
//
//	go test ./e2e -run '^$' -bench Load -benchtime 1x -timeout 30m
//	go test ./e2e -run '^$' -bench Load -benchtime 1x -load.subs=1000 -load.latency=50ms
//
// With -load.push the bot runs with PUBLIC_URL (Calendar push
// notifications, the emulator posting them to the bot as a TLS-terminating
// proxy would) and the default safety resync of 5 minutes, and meetings
// are created and moved at a steady rate (-load.rate a second) so that
// their reminders are due at once: how long after the change each is
// posted is how long the change took to be pushed, synced, planned and
// sent. Give it a spread longer than the resync interval, so that the
// calls counted include the safety syncs:
//
//	go test ./e2e -run '^$' -bench Load -benchtime 1x -timeout 30m -load.subs=1000 -load.latency=150ms -load.push -load.spread=6m
//
// With -load.impersonate=false every calendar is shared with the service
// account, as a company without domain-wide delegation shares them, and
// all of its reads count against that one account's quota of 600 a
// minute: at 1,000 calendars and a sweep every 30 s the calendars need
// more reads than the quota gives. The run: two minutes warm, a
// 30-second offset:
//
//	go test ./e2e -run '^$' -bench Load -benchtime 1x -timeout 30m -load.subs=1000 -load.impersonate=false -load.lead=2m -load.offset=30s
//
// With -load.replicas=N, N bots share one PostgreSQL database (DATABASE_URL)
// and the subscriptions, as several replicas do:
//
//	MEETINGBOT_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable \
//	  go test ./e2e -run '^$' -bench Load -benchtime 1x -timeout 30m -load.subs=1000 -load.replicas=2
var (
	loadSubs         = flag.String("load.subs", "100,1000,3000", "load benchmark: comma-separated numbers of subscriptions, one run each")
	loadLatency      = flag.Duration("load.latency", 150*time.Millisecond, "load benchmark: latency of every Calendar and Slack API call")
	loadLead         = flag.Duration("load.lead", 30*time.Second, "load benchmark: time from the meetings being put in the calendars to the first trigger")
	loadSpread       = flag.Duration("load.spread", 2*time.Minute, "load benchmark: span over which the triggers fall due")
	loadLatest       = flag.Int("load.latest", 0, "load benchmark: print this many of the latest reminders, with their trigger's time after the first and how late they were")
	loadCreatedAfter = flag.Bool("load.created-after", false, "load benchmark: put the meetings in the calendars just after the bot is up rather than before it starts, as the baseline before precise firing did; the first sweep may then miss a meeting, which its subscription's next sweep plans")
	loadLog          = flag.String("load.log", "", "load benchmark: write the bot's log, at debug level, and its last /metrics page to this file")
	loadChanged      = flag.Int("load.changed", 0, "load benchmark: percent of meetings moved an hour later (half) or cancelled (half) as soon as their reminder is posted")
	loadPush         = flag.Bool("load.push", false, "load benchmark: run with PUBLIC_URL (push notifications) and create and move meetings at -load.rate")
	loadRate         = flag.Float64("load.rate", 2, "load benchmark with -load.push: meetings created or moved a second, each due at once")
	loadResync       = flag.Duration("load.resync", 0, "load benchmark: CALENDAR_RESYNC_INTERVAL, if set (the bot's default otherwise)")
	loadImpersonate  = flag.Bool("load.impersonate", true, "load benchmark: read each calendar as its owner (GOOGLE_IMPERSONATE=true: a quota of 600 a minute per calendar); false: every calendar shared with the service account, all reads against its one quota of 600 a minute")
	loadOffsetFlag   = flag.Duration("load.offset", 2*time.Minute, "load benchmark: the reminder offset of every subscription")
	loadEnv          = flag.String("load.env", "", "load benchmark: more of the bot's environment, comma-separated KEY=VALUE pairs, e.g. GOMEMLIMIT=256MiB,GOGC=200")
	loadBudget       = flag.Int("load.budget", 0, "load benchmark: the workspace-wide posting budget Slack keeps, posts a minute (bursts of a tenth), as slacktest.SetPostingBudget; 0: none. With -load.spread=1s every trigger falls in the same second (the clustered case; BenchmarkBurst runs it at scale on the simulated clock)")
	loadReplicas     = flag.Int("load.replicas", 0, "load benchmark: run this many replicas on PostgreSQL (a schema of the run's own on MEETINGBOT_TEST_DATABASE_URL) instead of one bot on SQLite; CPU and RSS are their sums")
)

const (
	// loadMissAfter is how long after the last trigger a reminder not yet
	// posted counts as missed.
	loadMissAfter = 20 * time.Second
	// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times,
	// 100 on every Linux architecture Go supports.
	clockTicks = 100
)

// loadOffset is the reminder offset of every subscription (-load.offset).
func loadOffset() time.Duration { return *loadOffsetFlag }

// loadResult is what one run measured.
type loadResult struct {
	subs, reminders   int
	latency           time.Duration
	p50, p99, maxLate time.Duration // of the reminders posted in time
	posted            int           // reminders posted by the deadline, once or more
	missed, dups      int
	listPerSubMin     float64 // Calendar calls per subscription-minute
	getPerSubMin      float64
	cpuPercent        float64 // of one core, over the trigger window
	peakRSSMB         float64
	// With -load.changed: meetings changed after their reminder, those
	// whose reminder was edited by the deadline, how long after the
	// change, chat.update calls, and the events.get calls other than the
	// timers' checks before sending (meetingbot_fire_checks_total), per
	// changed meeting, since start-up.
	changed, edited  int
	editP50, editMax time.Duration
	updates          int
	getPerChanged    float64
	// With -load.push: the meetings created or moved during the run, how
	// many were reminded, how long after the change, and every Calendar
	// call (events.list, events.get, events.watch, channels.stop) per
	// subscription-minute.
	pushed, pushedPosted int
	pushP50, pushMax     time.Duration
	callsPerSubMin       float64
	watches              int
	// firstRead is how long after the bots were started every calendar
	// had been read once (its subscription's first sweep); 0 if some never
	// was. calendar429 is the Calendar requests refused for a quota: the
	// emulator enforces Google's default quotas (10,000 a minute per
	// project, 600 per user). slackPeak is the most calls of one Slack
	// method of Tier 3 ("50+ per minute": users.lookupByEmail,
	// conversations.open) in any minute: the emulator does not refuse
	// them, and Slack allows "occasional bursts" past 50, so the figure
	// says how far past the tier the bot went.
	// oldStart is the reminders posted for a start their meeting had no
	// longer (see runLoad).
	oldStart        int
	posting429      int // posts refused for the workspace's posting budget (-load.budget)
	firstRead       time.Duration
	calendar429     int
	slackPeak       int
	slackPeakMethod string
}

func BenchmarkLoad(b *testing.B) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		b.Skip("the load benchmark reads the bot's CPU and memory from /proc (Linux)")
	}
	var sizes []int
	for f := range strings.SplitSeq(*loadSubs, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("-load.subs=%q: want comma-separated positive numbers, e.g. 100,1000,3000", *loadSubs)
		}
		sizes = append(sizes, n)
	}
	botBinary(b) // build once, before any timing
	var header sync.Once
	for _, n := range sizes {
		name := fmt.Sprintf("subs=%d", n)
		if !*loadImpersonate {
			name += "/shared" // every calendar read as the service account
		}
		b.Run(name, func(b *testing.B) {
			var r loadResult
			for range b.N {
				r = runLoad(b, n, *loadLatency)
			}
			b.ReportMetric(r.p50.Seconds(), "p50-late-s")
			b.ReportMetric(r.p99.Seconds(), "p99-late-s")
			b.ReportMetric(r.maxLate.Seconds(), "max-late-s")
			b.ReportMetric(float64(r.missed), "missed")
			b.ReportMetric(float64(r.dups), "duplicated")
			b.ReportMetric(r.listPerSubMin, "list/sub-min")
			b.ReportMetric(r.getPerSubMin, "get/sub-min")
			b.ReportMetric(r.cpuPercent, "cpu-%")
			b.ReportMetric(r.peakRSSMB, "peak-RSS-MB")
			b.ReportMetric(r.firstRead.Seconds(), "first-read-all-s")
			b.ReportMetric(float64(r.calendar429), "calendar-429")
			b.ReportMetric(float64(r.oldStart), "old-start")
			b.ReportMetric(float64(r.slackPeak), "slack-tier3-peak/min")
			if *loadPush {
				b.ReportMetric(r.callsPerSubMin, "calls/sub-min")
				b.ReportMetric(r.pushMax.Seconds(), "pushed-max-s")
			}
			if r.changed > 0 {
				b.ReportMetric(float64(r.edited), "edited")
				b.ReportMetric(r.editMax.Seconds(), "edit-max-s")
				b.ReportMetric(r.getPerChanged, "get/changed")
			}
			header.Do(func() {
				fmt.Println("| subscriptions | latency | lateness p50 | p99 | max | missed | duplicated | events.list per sub-min | events.get per sub-min | CPU (one core) | peak RSS |")
				fmt.Println("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
			})
			fmt.Println(r.row())
			first := "not every calendar was read"
			if r.firstRead > 0 {
				first = fmt.Sprintf("every calendar read %.1f s after start", r.firstRead.Seconds())
			}
			fmt.Printf("|   start: %s | Calendar requests refused for a quota %s | busiest minute of a Slack Tier 3 method: %s calls of %s | reminders of a start their meeting had left %s |\n",
				first, thousands(r.calendar429), thousands(r.slackPeak), cmp.Or(r.slackPeakMethod, "none"), thousands(r.oldStart))
			if *loadBudget > 0 {
				fmt.Printf("|   posting budget %d a minute: posts Slack answered 429: %s |\n", *loadBudget, thousands(r.posting429))
			}
			if *loadPush {
				fmt.Printf("|   push: %s meetings created or moved to be due at once | reminded %s | after the change p50 %.1f s, max %.1f s | Calendar calls per sub-min, all kinds: %.3f | events.watch %s |\n",
					thousands(r.pushed), thousands(r.pushedPosted), r.pushP50.Seconds(), r.pushMax.Seconds(), r.callsPerSubMin, thousands(r.watches))
			}
			if r.changed > 0 {
				fmt.Printf("|   changed after the reminder: %s | edited %s | after the change p50 %.1f s, max %.1f s | chat.update calls %s | events.get per changed meeting %.2f |\n",
					thousands(r.changed), thousands(r.edited), r.editP50.Seconds(), r.editMax.Seconds(), thousands(r.updates), r.getPerChanged)
			}
		})
	}
}

// row formats r as a line of the README's table.
func (r loadResult) row() string {
	late := func(d time.Duration) string {
		if r.posted == 0 {
			return "–"
		}
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("| %s | %v | %s | %s | %s | %s of %s | %d | %.2f | %.2f | %.1f %% | %.0f MB |",
		thousands(r.subs), r.latency, late(r.p50), late(r.p99), late(r.maxLate),
		thousands(r.missed), thousands(r.reminders), r.dups, r.listPerSubMin, r.getPerSubMin, r.cpuPercent, r.peakRSSMB)
}

// thousands writes n with thousands separators: 3,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// runLoad runs the bot once with n subscriptions, each a calendar of its
// own DMing its owner (a company-wide deployment with domain-wide
// delegation: each calendar read as its owner; or, with
// -load.impersonate=false, shared with the service account), two
// meetings each, and measures it.
func runLoad(b *testing.B, n int, latency time.Duration) loadResult {
	cal, slack := calendartest.NewServer(), slacktest.NewServer()
	b.Cleanup(cal.Close)
	b.Cleanup(slack.Close)
	cal.SetLatency(latency)
	slack.SetLatency(latency)
	if *loadBudget > 0 {
		slack.SetPostingBudget(slacktest.PostingBudget{PerMinute: *loadBudget, Burst: max(1, *loadBudget/10)})
	}
	// Google's default quotas ("Usage limits",
	// https://developers.google.com/workspace/calendar/api/guides/quota).
	cal.SetQuota(calendartest.Quota{PerMinute: 10_000, PerUserPerMinute: 600})
	users := make([]slacktest.User, n)
	entries := make([]string, n)
	for i := range n {
		// Short IDs: CALENDARS must fit in one environment string (128 KiB).
		email := fmt.Sprintf("u%d@b.io", i)
		users[i] = slacktest.User{ID: fmt.Sprintf("U%07d", i), Name: fmt.Sprint("u", i), Email: email}
		entries[i] = email
		cal.AddCalendar(email)
		if *loadImpersonate {
			cal.Share(email, email) // readable by its owner only: impersonation must work
		} else {
			cal.Share(email, cal.ServiceAccountEmail()) // shared with the service account, as most companies do it
		}
	}
	slack.AddUsers(users...)

	dir := b.TempDir()
	env := map[string]string{
		"SLACK_BOT_TOKEN":         slacktest.Token,
		"SLACK_API_URL":           slack.URL(),
		"GOOGLE_CREDENTIALS_JSON": string(cal.ServiceAccountJSON()),
		"GOOGLE_API_ENDPOINT":     cal.Endpoint(),
		"GOOGLE_IMPERSONATE":      fmt.Sprint(*loadImpersonate),
		"CALENDARS":               strings.Join(entries, ","),
		"REMINDER_OFFSETS":        loadOffset().String(),
		"DATABASE_PATH":           filepath.Join(dir, "reminders.db"),
		"HTTP_ADDR":               "127.0.0.1:0",
	}
	if *loadLog != "" {
		env["LOG_LEVEL"] = "debug"
	}
	if *loadResync > 0 {
		env["CALENDAR_RESYNC_INTERVAL"] = loadResync.String()
	}
	for kv := range strings.SplitSeq(*loadEnv, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok {
			env[k] = v
		} else if kv != "" {
			b.Fatalf("-load.env=%q: want comma-separated KEY=VALUE pairs", *loadEnv)
		}
	}
	replicas := 1
	if *loadReplicas > 0 {
		replicas = *loadReplicas
		delete(env, "DATABASE_PATH")
		env["DATABASE_URL"] = pgtest.URL(b)
	}
	// With push every replica listens on an address of its own; Google's
	// notifications go to the first, as a load balancer may send them all
	// to one.
	addrs := make([]string, replicas)
	if *loadPush {
		for i := range addrs {
			addrs[i] = freeAddr(b)
		}
		env["PUBLIC_URL"] = publicURL
		cal.ForwardNotifications(publicURL, "http://"+addrs[0])
	}
	// Two meetings per subscription, triggers on whole seconds spread
	// evenly from lead after start-up: subscription k's first meeting in
	// the first half of the spread, its second in the second half. They
	// are in the calendars before the bot starts, unless -load.created-after.
	triggers := make(map[string]time.Time, 2*n)
	var first, last time.Time
	putMeetings := func() {
		first = time.Now().Add(*loadLead).Truncate(time.Second).Add(time.Second)
		for i := range 2 * n {
			trigger := first.Add(time.Duration(i) * *loadSpread / time.Duration(2*n)).Truncate(time.Second)
			id := fmt.Sprintf("e%06d", i)
			begins := trigger.Add(loadOffset())
			if err := cal.Put(entries[i%n], calendartest.NewEvent(id, "Load "+id, begins, begins.Add(30*time.Minute))); err != nil {
				b.Fatal(err)
			}
			triggers[id] = trigger
			if trigger.After(last) {
				last = trigger
			}
		}
	}
	if !*loadCreatedAfter {
		putMeetings()
	}
	ps := make([]*proc, replicas)
	started := time.Now()
	firstRead := make(chan time.Duration, 1)
	go func() { firstRead <- allRead(cal, entries, started, 2*time.Minute) }()
	for i := range ps {
		if addrs[i] != "" {
			env["HTTP_ADDR"] = addrs[i]
		}
		ps[i] = start(b, dir, env)
	}
	for _, p := range ps {
		p.addr()
	}
	p := ps[0]
	if *loadCreatedAfter {
		putMeetings()
	}

	// -load.changed: every k-th meeting is moved an hour later or
	// cancelled, alternately, the moment its reminder is in Slack.
	var (
		changeMu  sync.Mutex
		changedAt = map[string]time.Time{}
		toChange  = map[string]bool{}
		nth       = 0
	)
	if *loadChanged > 0 {
		k := max(1, 100 / *loadChanged)
		for i := 0; i < 2*n; i += k {
			toChange[fmt.Sprintf("e%06d", i)] = true
		}
		slack.OnMessage(func(m slacktest.Message) {
			if m.Metadata == nil {
				return
			}
			id, _ := m.Metadata.EventPayload["event_id"].(string)
			changeMu.Lock()
			if !toChange[id] {
				changeMu.Unlock()
				return
			}
			delete(toChange, id)
			nth++
			cancel := nth%2 == 0
			changeMu.Unlock()
			i, _ := strconv.Atoi(strings.TrimPrefix(id, "e"))
			var err error
			if cancel {
				err = cal.Delete(entries[i%n], id)
			} else {
				begins := triggers[id].Add(loadOffset() + time.Hour)
				err = cal.Put(entries[i%n], calendartest.NewEvent(id, "Load "+id, begins, begins.Add(30*time.Minute)))
			}
			changeMu.Lock()
			if err == nil {
				changedAt[id] = time.Now()
			}
			changeMu.Unlock()
		})
	}

	time.Sleep(time.Until(first))
	cpu0, _ := procsCPU(ps)
	list0, get0 := cal.RequestsTo(calendartest.MethodList), cal.RequestsTo(calendartest.MethodGet)
	push0 := cal.RequestsTo(calendartest.MethodWatch) + cal.RequestsTo(calendartest.MethodStop)
	deadline := last.Add(loadMissAfter)
	var ch changer
	if *loadPush {
		ch = changer{cal: cal, entries: entries, triggers: triggers, at: map[string]time.Time{}}
		ch.run(last.Add(-10*time.Second), *loadRate)
	}
	time.Sleep(time.Until(deadline))
	cpu1, cpuErr := procsCPU(ps)
	list1, get1 := cal.RequestsTo(calendartest.MethodList), cal.RequestsTo(calendartest.MethodGet)
	push1 := cal.RequestsTo(calendartest.MethodWatch) + cal.RequestsTo(calendartest.MethodStop)
	var rss int64
	var rssErr error
	for _, p := range ps {
		n, err := procPeakRSS(p.cmd.Process.Pid)
		rss, rssErr = rss+n, cmp.Or(rssErr, err)
	}
	var metrics string // every replica's page, one after the other: metricSum adds them up
	for _, p := range ps {
		_, page := httpGet("http://" + p.addr() + "/metrics")
		metrics += page
	}
	window := deadline.Sub(first)
	for _, p := range ps {
		if p.exited() {
			b.Fatalf("the bot exited during the run: %v\n%s", p.err, tail(p.out.String(), 20))
		}
	}
	if cpuErr != nil || rssErr != nil {
		b.Fatalf("read /proc of the bot: %v, %v", cpuErr, rssErr)
	}
	for _, p := range ps {
		p.signal(syscall.SIGTERM)
	}
	for _, p := range ps {
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			b.Logf("the bot did not stop within 15s of SIGTERM; killing it")
		}
	}

	if *loadLog != "" {
		text := fmt.Sprintf("first trigger at %s\n%s\n%s", first.Format(time.RFC3339Nano), p.out.String(), metrics)
		if err := os.WriteFile(*loadLog, []byte(text), 0o644); err != nil {
			b.Logf("write %s: %v", *loadLog, err)
		}
	}
	r := loadResult{subs: n, reminders: len(triggers), latency: latency, firstRead: <-firstRead}
	for _, c := range cal.QuotaRefusals() {
		r.calendar429 += c
	}
	r.slackPeak, r.slackPeakMethod = slackPeaks(slack.Calls())
	r.posting429 = slack.PostingRefusals()
	posts := map[string][]time.Time{}
	keys := map[string]map[string]int{} // by event ID: its reminders' ledger keys, each with its posts
	for _, m := range slack.Messages() {
		if m.Metadata == nil || m.Posted.After(deadline) {
			continue
		}
		id, _ := m.Metadata.EventPayload["event_id"].(string)
		ch.mu.Lock()
		_, pushed := ch.at[id]
		ch.mu.Unlock()
		if _, ok := triggers[id]; ok || pushed {
			posts[id] = append(posts[id], m.Posted)
			key, _ := m.Metadata.EventPayload["key"].(string)
			if keys[id] == nil {
				keys[id] = map[string]int{}
			}
			keys[id][key]++
		}
	}
	changeMu.Lock()
	defer changeMu.Unlock()
	r.changed = len(changedAt)
	var editLag []time.Duration
	for _, m := range slack.Messages() {
		if m.Metadata == nil || m.Edited.IsZero() || m.Edited.After(deadline) {
			continue
		}
		id, _ := m.Metadata.EventPayload["event_id"].(string)
		if at, ok := changedAt[id]; ok {
			editLag = append(editLag, m.Edited.Sub(at))
		}
	}
	r.edited = len(editLag)
	if len(editLag) > 0 {
		slices.Sort(editLag)
		r.editP50, r.editMax = percentile(editLag, 50), editLag[len(editLag)-1]
	}
	for _, c := range slack.CallsTo("chat.update") {
		if !c.At.After(deadline) {
			r.updates++
		}
	}

	var late []time.Duration
	type lateness struct {
		id      string
		trigger time.Duration // after the first
		late    time.Duration
	}
	var latest []lateness
	ch.mu.Lock()
	var pushLag []time.Duration
	for id, changed := range ch.at {
		delete(triggers, id) // due at once: measured from the change, not the trigger
		r.pushed++
		if ps := posts[id]; len(ps) > 0 {
			pushLag = append(pushLag, slices.MinFunc(ps, time.Time.Compare).Sub(changed))
		}
	}
	// A reminder posted twice is a duplicate; a meeting reminded for a
	// start it no longer had (moved before its old trigger, the move not
	// seen by then) and again for its new one has two reminders, the
	// first edited to say it moved: counted apart.
	for _, ks := range keys {
		for _, n := range ks {
			r.dups += n - 1
		}
		r.oldStart += len(ks) - 1
	}
	ch.mu.Unlock()
	r.pushedPosted = len(pushLag)
	if len(pushLag) > 0 {
		slices.Sort(pushLag)
		r.pushP50, r.pushMax = percentile(pushLag, 50), pushLag[len(pushLag)-1]
	}
	r.watches = cal.RequestsTo(calendartest.MethodWatch)
	for id, trigger := range triggers {
		ps := posts[id]
		if len(ps) == 0 {
			r.missed++
			continue
		}
		l := slices.MinFunc(ps, time.Time.Compare).Sub(trigger)
		late = append(late, l)
		latest = append(latest, lateness{id, trigger.Sub(first), l})
	}
	if *loadLatest > 0 {
		slices.SortFunc(latest, func(a, b lateness) int { return cmp.Compare(b.late, a.late) })
		for _, l := range latest[:min(*loadLatest, len(latest))] {
			b.Logf("%s: trigger %v after the first, %v late", l.id, l.trigger, l.late.Round(time.Millisecond))
		}
	}
	r.posted = len(late)
	if len(late) > 0 {
		slices.Sort(late)
		r.p50, r.p99, r.maxLate = percentile(late, 50), percentile(late, 99), late[len(late)-1]
	}
	subMinutes := float64(n) * window.Minutes()
	r.listPerSubMin = float64(list1-list0) / subMinutes
	r.getPerSubMin = float64(get1-get0) / subMinutes
	r.callsPerSubMin = float64(list1-list0+get1-get0+push1-push0) / subMinutes
	if r.changed > 0 {
		r.getPerChanged = float64(get1-metricSum(metrics, "meetingbot_fire_checks_total")) / float64(r.changed)
	}
	r.cpuPercent = 100 * (cpu1 - cpu0).Seconds() / window.Seconds()
	r.peakRSSMB = float64(rss) / (1 << 20)
	return r
}

// changer creates and moves meetings at a steady rate, each to be due at
// once (its trigger the moment of the change), alternately a new meeting
// and one of the run's meetings whose trigger is more than 30 seconds
// away, the farthest first; at records when each changed.
type changer struct {
	cal      *calendartest.Server
	entries  []string
	triggers map[string]time.Time // not written while it runs

	mu sync.Mutex
	at map[string]time.Time
}

// run changes rate meetings a second until until, in the background.
func (c *changer) run(until time.Time, rate float64) {
	ids := make([]string, 0, len(c.triggers))
	for id := range c.triggers {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return c.triggers[b].Compare(c.triggers[a]) }) // farthest first
	go func() {
		tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
		defer tick.Stop()
		for i := 0; ; i++ {
			now := <-tick.C
			if now.After(until) {
				return
			}
			var id, calendarID string
			if i%2 == 0 || len(ids) == 0 || c.triggers[ids[0]].Sub(now) < 30*time.Second {
				id, calendarID = fmt.Sprintf("p%06d", i), c.entries[i%len(c.entries)]
			} else {
				id, ids = ids[0], ids[1:]
				k, _ := strconv.Atoi(strings.TrimPrefix(id, "e"))
				calendarID = c.entries[k%len(c.entries)]
			}
			begins := time.Now().Add(loadOffset())
			c.mu.Lock()
			c.at[id] = time.Now()
			c.mu.Unlock()
			if err := c.cal.Put(calendarID, calendartest.NewEvent(id, "Load "+id, begins, begins.Add(30*time.Minute))); err != nil {
				c.mu.Lock()
				delete(c.at, id)
				c.mu.Unlock()
			}
		}
	}()
}

// metricSum adds up the samples of a metric in a Prometheus text page.
func metricSum(page, name string) int {
	sum := 0.0
	for line := range strings.SplitSeq(page, "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok && (strings.HasPrefix(rest, "{") || strings.HasPrefix(rest, " ")) {
			fields := strings.Fields(rest[strings.LastIndexByte(rest, '}')+1:])
			if len(fields) > 0 {
				v, _ := strconv.ParseFloat(fields[0], 64)
				sum += v
			}
		}
	}
	return int(sum)
}

// percentile returns the nearest-rank p-th percentile of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

// procCPU returns the user and system CPU time pid has used.
// procsCPU is the CPU time of the processes ps, together.
func procsCPU(ps []*proc) (time.Duration, error) {
	var sum time.Duration
	for _, p := range ps {
		d, err := procCPU(p.cmd.Process.Pid)
		if err != nil {
			return 0, err
		}
		sum += d
	}
	return sum, nil
}

func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces:
	// count fields after its closing one. utime and stime are fields 14
	// and 15.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the name", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q, stime %q", pid, f[11], f[12])
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// procPeakRSS returns pid's peak resident set size in bytes (VmHWM).
func procPeakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/%d/status: VmHWM %q", pid, v)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmHWM", pid)
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// allRead returns how long after started every calendar of ids had had
// an events.list request, polling until within has passed; 0 if some had
// none by then.
func allRead(cal *calendartest.Server, ids []string, started time.Time, within time.Duration) time.Duration {
	pending := slices.Clone(ids)
	for time.Since(started) < within {
		pending = slices.DeleteFunc(pending, func(id string) bool { return cal.Requests(id) > 0 })
		if len(pending) == 0 {
			return time.Since(started)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return 0
}

// tier3 are the Slack methods of Tier 3 ("50+ per minute", Slack's rate
// limits guide, https://docs.slack.dev/apis/web-api/rate-limits) that a
// reminder to a person may need.
var tier3 = []string{"users.lookupByEmail", "conversations.open"}

// slackPeaks returns the most calls of one tier3 method in any minute
// (sliding), and that method.
func slackPeaks(calls []slacktest.Call) (peak int, method string) {
	at := map[string][]time.Time{}
	for _, c := range calls {
		if slices.Contains(tier3, c.Method) {
			at[c.Method] = append(at[c.Method], c.At)
		}
	}
	for m, ts := range at {
		slices.SortFunc(ts, time.Time.Compare)
		lo := 0
		for hi := range ts {
			for ts[hi].Sub(ts[lo]) >= time.Minute {
				lo++
			}
			if n := hi - lo + 1; n > peak {
				peak, method = n, m
			}
		}
	}
	return peak, method
}
