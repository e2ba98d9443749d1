package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/daemon"
	"github.com/meetingbot/meetingbot/internal/logger"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// BenchmarkBurst is the load benchmark's clustered case, the top of the
// hour: N people whose meetings all start at the same minute, one
// reminder each (-burst.offsets, one run per offset), against a Slack
// that keeps a workspace-wide posting budget (-burst.budgets posts a
// minute, bursts of a tenth of that: slacktest.PostingBudget) and answers
// every call after 150 ms. At 300 posts a minute 3,000 reminders take ten
// minutes to post and 10,000 more than half an hour, so the runs are of
// the simulated day's kind: the bot as serve wires it, on the fake clock
// of a testing/synctest bubble, each in a process of its own. The bot
// starts eight minutes before the triggers and runs until two minutes
// after the meetings' start.
//
// Each case runs three ways (-burst.modes): baseline, the bot before the
// posting budget (SLACK_POSTS_PER_MINUTE=0: channels paced, Slack's 429s
// retried); paced, every post waiting its turn within the budget
// (REMINDER_EARLY_MAX=0); and ahead, the default, which also posts a
// crowd ahead of its triggers within a quarter of the offset. It reports
// the reminders' lateness after their trigger (p50, p99, max; negative:
// ahead), how many were posted after their meeting started, how many were
// never posted (the bot posts none after the start), how many went ahead
// and the longest lead, and the 429s Slack answered.
//
//	go test ./e2e -run '^$' -bench Burst -benchtime 1x -timeout 60m
//	go test ./e2e -run '^$' -bench Burst -benchtime 1x -burst.subs=10000 -burst.budgets=300,600 -timeout 120m
var (
	burstSubs    = flag.String("burst.subs", "3000,10000", "burst benchmark: comma-separated numbers of people, one run each")
	burstOffsets = flag.String("burst.offsets", "1m,10m", "burst benchmark: comma-separated reminder offsets, one run each")
	burstBudgets = flag.String("burst.budgets", "300,600", "burst benchmark: comma-separated workspace posting budgets (posts a minute), one run each")
	burstModes   = flag.String("burst.modes", "baseline,paced,ahead", "burst benchmark: comma-separated modes, one run each: baseline (no workspace pacing), paced, ahead (the default bot)")
)

// burstEnv names the environment variables of a run's process.
const (
	burstEnvConfig = "MEETINGBOT_BURST_CONFIG"
	burstEnvResult = "MEETINGBOT_BURST_RESULT"
)

// burstConfig is one run of BenchmarkBurst.
type burstConfig struct {
	Subs   int
	Offset time.Duration
	Budget int
	Mode   string
}

// burstResult is what a run measured, in the bubble's fake time.
type burstResult struct {
	Config                 burstConfig
	Due, Posted, Dup       int
	Missed, AfterStart     int
	Early                  int
	P50, P99, Max, MaxLead time.Duration
	Refused                int // 429s
	Posts                  int // chat.postMessage calls
	ServeErr               string
}

func BenchmarkBurst(b *testing.B) {
	var runs []burstConfig
	for _, n := range splitInts(b, "burst.subs", *burstSubs) {
		for _, o := range strings.Split(*burstOffsets, ",") {
			offset, err := time.ParseDuration(strings.TrimSpace(o))
			if err != nil || offset <= 0 {
				b.Fatalf("-burst.offsets=%q: want comma-separated durations, e.g. 1m,10m", *burstOffsets)
			}
			for _, budget := range splitInts(b, "burst.budgets", *burstBudgets) {
				for _, mode := range strings.Split(*burstModes, ",") {
					runs = append(runs, burstConfig{Subs: n, Offset: offset, Budget: budget, Mode: strings.TrimSpace(mode)})
				}
			}
		}
	}
	fmt.Println("| people | offset | budget/min | mode | lateness p50 | p99 | max | after start | never posted | ahead | longest lead | 429s | posts |")
	fmt.Println("| ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, cfg := range runs {
		name := fmt.Sprintf("subs=%d/offset=%s/budget=%d/%s", cfg.Subs, cfg.Offset, cfg.Budget, cfg.Mode)
		b.Run(name, func(b *testing.B) {
			var r burstResult
			for range b.N {
				r = runBurstProcess(b, cfg)
			}
			b.ReportMetric(r.P99.Seconds(), "p99-late-s")
			b.ReportMetric(float64(r.AfterStart), "after-start")
			b.ReportMetric(float64(r.Missed), "never-posted")
			b.ReportMetric(float64(r.Refused), "slack-429")
			fmt.Println(r.row())
		})
	}
}

// splitInts parses a flag of comma-separated positive numbers.
func splitInts(b *testing.B, name, v string) []int {
	var out []int
	for f := range strings.SplitSeq(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("-%s=%q: want comma-separated positive numbers", name, v)
		}
		out = append(out, n)
	}
	return out
}

func (r burstResult) row() string {
	s := func(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
	return fmt.Sprintf("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |",
		thousands(r.Config.Subs), r.Config.Offset, r.Config.Budget, r.Config.Mode, s(r.P50), s(r.P99), s(r.Max),
		thousands(r.AfterStart), thousands(r.Missed), thousands(r.Early), s(r.MaxLead), thousands(r.Refused), thousands(r.Posts))
}

// runBurstProcess runs cfg in a process of its own (synctest needs a
// *testing.T) and returns what it measured.
func runBurstProcess(b *testing.B, cfg burstConfig) burstResult {
	out := filepath.Join(b.TempDir(), "result.json")
	js, err := json.Marshal(cfg)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBurstProcess$", "-test.count=1", "-test.timeout=0")
	cmd.Env = append(os.Environ(), burstEnvConfig+"="+string(js), burstEnvResult+"="+out)
	if os.Getenv("GOGC") == "" {
		cmd.Env = append(cmd.Env, "GOGC=400")
	}
	b.ResetTimer()
	text, err := cmd.CombinedOutput()
	b.StopTimer()
	if err != nil {
		b.Fatalf("burst: %v\n%s", err, tail(string(text), 30))
	}
	data, err := os.ReadFile(out)
	if err != nil {
		b.Fatalf("burst wrote no result: %v\n%s", err, tail(string(text), 30))
	}
	var r burstResult
	if err := json.Unmarshal(data, &r); err != nil {
		b.Fatal(err)
	}
	return r
}

// TestBurstProcess is one run of BenchmarkBurst, in its own process.
func TestBurstProcess(t *testing.T) {
	js, out := os.Getenv(burstEnvConfig), os.Getenv(burstEnvResult)
	if js == "" || out == "" {
		t.Skip("a run of BenchmarkBurst, which starts it")
	}
	var cfg burstConfig
	if err := json.Unmarshal([]byte(js), &cfg); err != nil {
		t.Fatal(err)
	}
	var r burstResult
	synctest.Test(t, func(t *testing.T) { r = runBurst(t, cfg) })
	if r.ServeErr != "" || r.Posted == 0 {
		t.Fatalf("burst: %s; posted %d of %d", r.ServeErr, r.Posted, r.Due)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBurstSmoke runs the clustered case small: 150 people, one 1m
// reminder each, all due in the same second, a Slack that keeps 60 posts a
// minute (the operator run). The bot posts nothing after a
// meeting's start, nothing twice, and meets a handful of 429s, where
// before the budget it met one for nearly every post past the limit.
func TestBurstSmoke(t *testing.T) {
	for _, mode := range []string{"baseline", "ahead"} {
		t.Run(mode, func(t *testing.T) {
			var r burstResult
			synctest.Test(t, func(t *testing.T) {
				r = runBurst(t, burstConfig{Subs: 150, Offset: time.Minute, Budget: 60, Mode: mode})
			})
			t.Log(r.row())
			if r.ServeErr != "" {
				t.Fatal(r.ServeErr)
			}
			if r.Dup > 0 {
				t.Errorf("%d reminders posted twice", r.Dup)
			}
			if mode == "baseline" {
				if r.Refused < 20 {
					t.Errorf("baseline: %d 429s, want the storm the budget ends", r.Refused)
				}
				return
			}
			if r.AfterStart > 0 || r.Refused > 5 || r.Early == 0 {
				t.Errorf("ahead: %d posted after the start, %d 429s, %d ahead; want none, at most 5, some", r.AfterStart, r.Refused, r.Early)
			}
			if r.Posted < 60 {
				t.Errorf("ahead: posted %d of 150 before the start, want at least the 60 a minute allows", r.Posted)
			}
		})
	}
}

// burstWarm is how long the bot runs before the triggers.
const burstWarm = 8 * time.Minute

// runBurst runs cfg inside a synctest bubble.
func runBurst(t testing.TB, cfg burstConfig) burstResult {
	t0 := time.Now()
	trigger := t0.Add(burstWarm).Truncate(time.Minute)
	start := trigger.Add(cfg.Offset)
	cal, slack := calendartest.NewInProcess(), slacktest.NewInProcess()
	cal.SetLatency(dayLatency)
	slack.SetLatency(dayLatency)
	slack.SetPostingBudget(slacktest.PostingBudget{PerMinute: cfg.Budget, Burst: max(1, cfg.Budget/10)})
	users := make([]slacktest.User, cfg.Subs)
	emails := make([]string, cfg.Subs)
	for i := range users {
		emails[i] = fmt.Sprintf("p%d@burst.example", i)
		users[i] = slacktest.User{ID: fmt.Sprintf("U%08d", i), Name: fmt.Sprint("p", i), Email: emails[i]}
		cal.AddCalendar(emails[i])
		cal.Share(emails[i], emails[i])
		id := fmt.Sprintf("b%06d", i)
		if err := cal.Put(emails[i], calendartest.NewEvent(id, "Top of the hour "+id, start, start.Add(30*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	slack.AddUsers(users...)

	env := map[string]string{
		"SLACK_BOT_TOKEN":         slacktest.Token,
		"SLACK_API_URL":           slack.URL(),
		"GOOGLE_CREDENTIALS_JSON": string(cal.ServiceAccountJSON()),
		"GOOGLE_API_ENDPOINT":     cal.Endpoint(),
		"GOOGLE_IMPERSONATE":      "true",
		"CALENDARS":               strings.Join(emails, ","),
		"REMINDER_OFFSETS":        cfg.Offset.String(),
		"DATABASE_PATH":           filepath.Join(t.TempDir(), "reminders.db"),
		"HTTP_ADDR":               "127.0.0.1:8080",
		"LOG_LEVEL":               "error",
		"SLACK_POSTS_PER_MINUTE":  strconv.Itoa(cfg.Budget),
	}
	switch cfg.Mode {
	case "baseline":
		env["SLACK_POSTS_PER_MINUTE"], env["REMINDER_EARLY_MAX"] = "0", "0"
	case "paced":
		env["REMINDER_EARLY_MAX"] = "0"
	case "ahead":
	default:
		t.Fatalf("mode %q: want baseline, paced or ahead", cfg.Mode)
	}
	conf, err := config.Parse(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	ln := newMemListener()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() {
		b, err := daemon.New(ctx, conf, daemon.Options{
			Logger:       logger.New(conf.LogLevel, "text", io.Discard),
			Listen:       ln.listen,
			CalendarHTTP: cal.Client(),
			SlackHTTP:    &http.Client{Transport: slack.Client().Transport},
		})
		if err != nil {
			served <- err
			return
		}
		defer b.Close()
		served <- b.Run(ctx)
	}()
	time.Sleep(time.Until(start.Add(2 * time.Minute)))
	r := burstResult{Config: cfg, Due: cfg.Subs}
	select {
	case err := <-served:
		r.ServeErr = fmt.Sprint("the bot stopped: ", err)
	default:
		cancel()
		if err := <-served; err != nil {
			r.ServeErr = "the bot stopped with an error: " + err.Error()
		}
	}
	cal.Close()
	slack.Close()
	r.Refused = slack.PostingRefusals()
	r.Posts = len(slack.CallsTo("chat.postMessage"))
	r.measure(slack.Messages(), trigger, start)
	return r
}

// measure reads the reminders posted, each for one person's meeting
// triggered at trigger and starting at start.
func (r *burstResult) measure(msgs []slacktest.Message, trigger, start time.Time) {
	posts := map[string]int{}
	var late []time.Duration
	for _, m := range msgs {
		if m.Metadata == nil || m.Metadata.EventType != "meeting_reminder" {
			continue
		}
		id, _ := m.Metadata.EventPayload["event_id"].(string)
		if posts[id]++; posts[id] > 1 {
			r.Dup++
			continue
		}
		if !m.Posted.Before(start) {
			r.AfterStart++
		}
		d := m.Posted.Sub(trigger)
		if d < 0 {
			r.Early++
			r.MaxLead = max(r.MaxLead, -d)
		}
		late = append(late, d)
	}
	r.Posted = len(late)
	r.Missed = r.Due - r.Posted
	if len(late) > 0 {
		slices.Sort(late)
		r.P50, r.P99, r.Max = percentile(late, 50), percentile(late, 99), late[len(late)-1]
	}
}
