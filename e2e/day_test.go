package e2e

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// BenchmarkDay runs a simulated day: the bot as serve wires it (scheduler,
// mirror, push, SQLite store, notifier) over calendartest and slacktest,
// in memory, on the fake clock of a testing/synctest bubble, through 24
// hours. The APIs answer after 150 ms of fake time.
//
// N subscriptions (-day.subs), each a person's calendar read as its owner
// (domain-wide delegation) and reminded by DM, with the bot's default
// REMINDER_OFFSETS (10m) and TICK_INTERVAL (30s). Each person works 9:00
// to 18:00 in one of nine zones from Los Angeles to Sydney and has 6 to 10
// meetings on the half hour; 40 % have a daily stand-up series and 30 % a
// weekly one-to-one. During the day 5 % of the meetings are moved and 2 %
// cancelled, minutes to hours before their reminders; 10 % are created 15
// minutes to 4 hours ahead and 5 % less than 15 minutes ahead; one person
// in 300 gets 40 invitations at one instant. With push (PUBLIC_URL) 1 %
// of the notifications are lost, and the Calendar answers 503 to every
// call for 10 minutes from 14:15.
//
// It reports per run:
//
//   - calls/sub-day: Calendar API requests of every kind (events.list,
//     events.get, events.instances, events.watch, channels.stop) per
//     subscription-day, token requests apart (token/sub-day);
//   - slack-calls/sub-day: Slack Web API calls of every method;
//   - missed, dup, late>1s, stray: reminders never posted, posted twice,
//     posted more than 1 s of fake time after their trigger (or after the
//     meeting came to the calendar, when that was later), and posted for
//     a meeting cancelled or moved away;
//   - change-late>2s: with push, changes the bot read (the events.list
//     answer that held them) more than 2 s after their notification was
//     delivered; changes whose notifications were all lost apart
//     (lost-notif, and lost-max-s from the change to its reading), and
//     those notified during the outage apart too (in the printed summary);
//     change-max-s, the longest from a change to its reading otherwise.
//
// The bot's CPU takes no fake time: lateness is what the design and the
// APIs' latency make it, not what a slow machine adds. It fails only when
// the wiring is broken (the bot stops, or posts nothing), never on the
// figures. Each run is a process of its own (the test binary again, as
// TestDayProcess), since synctest needs a *testing.T; -day.cpuprofile
// profiles it.
//
//	go test ./e2e -run '^$' -bench Day -benchtime 1x -day.subs=1000 -day.push=both -timeout 60m
//	go test ./e2e -run '^$' -bench Day -benchtime 1x -day.subs=10000 -day.push=on -timeout 120m
//
// A run's real time is about the bot's own CPU over the day: some 5
// minutes at 1,000 subscriptions, 35 to 45 at 10,000 (see "A simulated
// day" in docs/performance.md). -day.span simulates less of the day.
//
// -day.resync sets CALENDAR_RESYNC_INTERVAL, one run per comma-separated
// value; an empty one keeps the bot's default (config.DefaultResyncPush
// with push, the tick without), so that a baseline runs beside it, here
// the default and the 5-minute resync:
//
//	go test ./e2e -run '^$' -bench Day -benchtime 1x -day.subs=1000 -day.push=on -day.resync=,5m
var (
	daySubs    = flag.String("day.subs", "1000", "simulated day: comma-separated numbers of subscriptions, one run each")
	dayPush    = flag.String("day.push", "both", "simulated day: on, off or both: with PUBLIC_URL (push notifications), without, or a run of each")
	daySeed    = flag.Uint64("day.seed", 1, "simulated day: seed of the people's days and of the notifications lost")
	dayResync  = flag.String("day.resync", "", "simulated day: comma-separated CALENDAR_RESYNC_INTERVAL values, one run each; empty: the bot's default")
	daySpan    = flag.Duration("day.span", 24*time.Hour, "simulated day: how much fake time to simulate")
	dayCPU     = flag.String("day.cpuprofile", "", "simulated day: write each run's CPU profile to this file, suffixed with the run's name")
	dayLog     = flag.String("day.log", "", "simulated day: write the bot's log to this file, suffixed with the run's name")
	dayLogging = flag.String("day.loglevel", "warn", "simulated day: the bot's LOG_LEVEL with -day.log")
)

// dayLatency is every API call's, in fake time.
const dayLatency = 150 * time.Millisecond

// dayEnv names the environment variables the benchmark hands a run's
// process: its dayConfig as JSON, and the file its dayResult goes to.
const (
	dayEnvConfig = "MEETINGBOT_DAY_CONFIG"
	dayEnvResult = "MEETINGBOT_DAY_RESULT"
)

func BenchmarkDay(b *testing.B) {
	var sizes []int
	for f := range strings.SplitSeq(*daySubs, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("-day.subs=%q: want comma-separated positive numbers, e.g. 1000,10000", *daySubs)
		}
		sizes = append(sizes, n)
	}
	var modes []bool
	switch *dayPush {
	case "on":
		modes = []bool{true}
	case "off":
		modes = []bool{false}
	case "both":
		modes = []bool{true, false}
	default:
		b.Fatalf("-day.push=%q: want on, off or both", *dayPush)
	}
	resyncs := strings.Split(*dayResync, ",")
	for _, n := range sizes {
		for _, push := range modes {
			for _, resync := range resyncs {
				resync = strings.TrimSpace(resync)
				name := fmt.Sprintf("subs=%d/push=%s", n, map[bool]string{true: "on", false: "off"}[push])
				if resync != "" {
					name += "/resync=" + resync
				}
				b.Run(name, func(b *testing.B) {
					cfg := dayConfig{Subs: n, Push: push, Seed: *daySeed, Resync: resync, Span: *daySpan, Latency: dayLatency}
					var r dayResult
					for range b.N {
						r = runDayProcess(b, cfg, strings.NewReplacer("/", "-", "=", "").Replace(name))
					}
					b.ReportMetric(r.perSubDay(r.calendarCalls()), "calls/sub-day")
					b.ReportMetric(r.perSubDay(r.Token), "token/sub-day")
					b.ReportMetric(r.perSubDay(r.slackCalls()), "slack-calls/sub-day")
					b.ReportMetric(float64(r.Missed), "missed")
					b.ReportMetric(float64(r.Dup), "dup")
					b.ReportMetric(float64(r.Late), "late>1s")
					b.ReportMetric(float64(r.Stray), "stray")
					if push {
						b.ReportMetric(float64(r.ChangeLate), "change-late>2s")
						b.ReportMetric(float64(r.Lost), "lost-notif")
						b.ReportMetric(r.LostMax.Seconds(), "lost-max-s")
					}
					b.ReportMetric(r.ChangeMax.Seconds(), "change-max-s")
					fmt.Print(r.summary())
				})
			}
		}
	}
}

// runDayProcess runs one simulated day in a process of its own and
// returns what it measured, failing b when the wiring is broken.
func runDayProcess(b *testing.B, cfg dayConfig, name string) dayResult {
	out := filepath.Join(b.TempDir(), "result.json")
	if *dayLog != "" {
		cfg.Log, cfg.LogLevel = *dayLog+"."+name, *dayLogging
	}
	js, err := json.Marshal(cfg)
	if err != nil {
		b.Fatal(err)
	}
	args := []string{"-test.run=^TestDayProcess$", "-test.count=1", "-test.timeout=0"}
	if *dayCPU != "" {
		args = append(args, "-test.cpuprofile="+*dayCPU+"."+name)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), dayEnvConfig+"="+string(js), dayEnvResult+"="+out)
	if os.Getenv("GOGC") == "" {
		// The run keeps little: collecting less often spends less of the
		// real time on the collector.
		cmd.Env = append(cmd.Env, "GOGC=400")
	}
	b.ResetTimer()
	start := time.Now()
	text, err := cmd.CombinedOutput()
	took := time.Since(start)
	b.StopTimer()
	if err != nil {
		b.Fatalf("simulated day: %v\n%s", err, tail(string(text), 30))
	}
	data, err := os.ReadFile(out)
	if err != nil {
		b.Fatalf("simulated day wrote no result: %v\n%s", err, tail(string(text), 30))
	}
	var r dayResult
	if err := json.Unmarshal(data, &r); err != nil {
		b.Fatal(err)
	}
	fmt.Printf("day: %s took %v of real time\n", name, took.Round(time.Second))
	return r
}

// TestDayProcess is one run of BenchmarkDay, in its own process: it runs
// only with the benchmark's environment.
func TestDayProcess(t *testing.T) {
	js, out := os.Getenv(dayEnvConfig), os.Getenv(dayEnvResult)
	if js == "" || out == "" {
		t.Skip("a run of BenchmarkDay, which starts it")
	}
	var cfg dayConfig
	if err := json.Unmarshal([]byte(js), &cfg); err != nil {
		t.Fatal(err)
	}
	var r dayResult
	synctest.Test(t, func(t *testing.T) { r = runDay(t, cfg) })
	if why := r.broken(); why != "" {
		t.Fatalf("simulated day: %s\n%s", why, r.summary())
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDaySmoke runs a few hours of a simulated day for 20 people with
// push: the wiring BenchmarkDay measures works, and what people notice
// holds: every reminder posted once, on time.
func TestDaySmoke(t *testing.T) {
	var r dayResult
	synctest.Test(t, func(t *testing.T) {
		r = runDay(t, dayConfig{Subs: 20, Push: true, Seed: 1, Span: 6 * time.Hour, Latency: dayLatency})
	})
	t.Log(r.summary())
	if why := r.broken(); why != "" {
		t.Fatal(why)
	}
	if r.Calendar["events.watch"] == 0 || r.Notifications == 0 {
		t.Errorf("events.watch %d, notifications %d: want push on", r.Calendar["events.watch"], r.Notifications)
	}
	if r.Missed+r.Dup+r.Stray > 0 {
		t.Errorf("reminders missed %d, duplicated %d, stray %d of %d; want none", r.Missed, r.Dup, r.Stray, r.Due)
	}
}
