package monitor_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/monitor"
)

// The posting budget's state is on /metrics as it stands at the scrape,
// and a reminder posted ahead of its trigger is counted with its lead.
func TestPostingMetrics(t *testing.T) {
	m, _, srv := start(t)
	p := monitor.Posting{PerMinute: 150, Used: 149, Waiting: 812, Refusals: 3, OverBudget: 40}
	m.TrackPosting(func() monitor.Posting { return p })
	trig := t0.Add(time.Minute)
	m.Recorded(meetingbot.Entry{Outcome: meetingbot.Sent, TriggerAt: trig, RecordedAt: trig.Add(-12 * time.Second)})
	_, body := get(t, srv.URL+"/metrics")
	for _, want := range []string{
		"meetingbot_slack_posting_budget_per_minute 150",
		"meetingbot_slack_posts_last_minute 149",
		"meetingbot_slack_posts_held 812",
		"meetingbot_slack_posts_rate_limited_total 3",
		"meetingbot_slack_posts_over_budget_total 40",
		"meetingbot_reminders_posted_ahead_seconds_count 1",
		"meetingbot_reminders_posted_ahead_seconds_sum 12",
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// The forecast finds the busiest minute of the coming day from the
// calendars' last readings, warns once when it will not fit the budget
// (with the fix), and says when it fits again.
func TestPostingForecast(t *testing.T) {
	m, clk, srv := start(t)
	var subs []meetingbot.Subscription
	readings := map[string][]meetingbot.Meeting{}
	for i := range 400 {
		s := meetingbot.Subscription{ID: fmt.Sprint("p", i), CalendarID: fmt.Sprintf("p%d@example.com", i), Offsets: []time.Duration{time.Minute}}
		subs = append(subs, s)
		readings[s.CalendarID] = []meetingbot.Meeting{
			{ID: "top", Start: t0.Add(time.Hour)},                                     // 09:59 for all 400
			{ID: "spread", Start: t0.Add(2*time.Hour + time.Duration(i)*time.Second)}, // 400 over 7 minutes
		}
	}
	var log bytes.Buffer
	f := &monitor.PostingForecast{
		Subscriptions: func(context.Context) ([]meetingbot.Subscription, error) { return subs, nil },
		Reading: func(_ context.Context, id string) ([]meetingbot.Meeting, bool, error) {
			return readings[id], true, nil
		},
		PerMinute: 300, Early: 5 * time.Minute, Now: clk.Now, Monitor: m,
		Logger: slog.New(slog.NewTextHandler(&log, nil)),
	}
	b, err := f.Project(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// A 1m reminder may go 15 s ahead: 300 + 75 fit in the minute.
	if !b.Minute.Equal(t0.Add(59*time.Minute)) || b.Reminders != 400 || b.Fits != 375 {
		t.Errorf("Project() = %v, %d reminders, %v fit; want 09:59, 400, 375", b.Minute, b.Reminders, b.Fits)
	}
	f.Check(context.Background())
	f.Check(context.Background())
	if n := strings.Count(log.String(), "level=WARN"); n != 1 || !strings.Contains(log.String(), "400 reminders fall due in the minute of 09:59 UTC") || !strings.Contains(log.String(), "Fixes: longer offsets") {
		t.Errorf("two checks of a day over the budget logged %d warnings:\n%s\nwant one, naming the minute and the fixes", n, log.String())
	}
	_, body := get(t, srv.URL+"/metrics")
	if !strings.Contains(body, "meetingbot_slack_busiest_minute_reminders 400\n") {
		t.Errorf("/metrics lacks the busiest minute's 400 reminders")
	}
	f.PerMinute = 600
	f.Check(context.Background())
	if !strings.Contains(log.String(), "fits Slack's posting budget again") {
		t.Errorf("a budget that fits again is not said:\n%s", log.String())
	}
}
