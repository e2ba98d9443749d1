package calendar_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	gcal "google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/internal/retry"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/scheduler"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// splitWorld is a daily 09:00 standup in Alice's calendar, reminded 10m and
// 1m before in #standup by the real scheduler, reading the calendar through
// the real client and posting through the real Slack client, with a SQLite
// ledger.
type splitWorld struct {
	t     *testing.T
	cal   *calendartest.Server
	slack *slacktest.Server
	clock *clock.Fake
	sched *scheduler.Scheduler
}

const standupCal = "alice@example.com"

// day is the Monday of the split; the standup started a week before.
var day = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

func at(d, hh, mm int) time.Time {
	return day.AddDate(0, 0, d).Add(time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute)
}

func newSplitWorld(t *testing.T) *splitWorld {
	t.Helper()
	w := &splitWorld{t: t, cal: newServer(t), slack: slacktest.NewServer(), clock: clock.NewFake(at(0, 8, 0))}
	t.Cleanup(w.slack.Close)
	w.slack.AddChannel(slacktest.Channel{ID: "C0STANDUP1", Name: "standup", Member: true})
	w.slack.SetClock(w.clock.Now)
	ev := calendartest.NewEvent("standup", "Standup", at(-7, 9, 0), at(-7, 9, 15))
	ev.Recurrence = []string{"RRULE:FREQ=DAILY;COUNT=20"}
	if err := w.cal.Put(standupCal, ev); err != nil {
		t.Fatal(err)
	}
	src, _ := newSource(t, w.cal, nil)
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "reminders.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	slack := notify.New(notify.Config{
		Token: slacktest.Token, APIURL: w.slack.URL(), Now: w.clock.Now,
		Interval: -1, Retry: retry.Policy{MaxAttempts: 1}, CallTimeout: 5 * time.Second,
	})
	sub := meetingbot.Subscription{ID: "standup", CalendarID: standupCal, Destination: "#standup",
		Offsets: []time.Duration{10 * time.Minute, time.Minute}}
	w.sched, err = scheduler.New([]meetingbot.Subscription{sub}, src, slack, store, scheduler.Options{
		Clock: w.clock, Interval: 30 * time.Second, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// run ticks every 30s from from until before to.
func (w *splitWorld) run(from, to time.Time) {
	w.t.Helper()
	for now := from; now.Before(to); now = now.Add(30 * time.Second) {
		w.clock.Set(now)
		if err := w.sched.Tick(context.Background()); err != nil {
			w.t.Fatalf("Tick(%v) = %v", now, err)
		}
	}
}

// reminders returns when each reminder was posted and what it says, in order.
func (w *splitWorld) reminders() []string {
	var out []string
	for _, m := range w.slack.Messages() {
		out = append(out, m.Posted.UTC().Format("Jan 2 15:04")+" "+m.Text)
	}
	return out
}

// TestSplitSeriesRemindsOnce edits "this and following events" of a daily
// standup as Google Calendar does (a new series with new instance ids)
// after an instance's 10m reminder went out and before it starts. The split
// alone sends nothing again; a time it changes gets its reminders, and the
// reminder already sent is edited: moved, when one instance moves; cancelled,
// when the series moves, for its occurrences at the new time are new ones.
func TestSplitSeriesRemindsOnce(t *testing.T) {
	tests := []struct {
		name  string
		split func(*gcal.Event)
		after func(w *splitWorld) // what happens after the split, at 08:54
		want  []string
	}{
		{
			name:  "new title",
			split: func(ev *gcal.Event) { ev.Summary = "Standup in room 2" },
			want: []string{
				"Nov 30 08:50 Standup starts in 10 minutes",
				"Nov 30 08:59 Standup in room 2 starts in 1 minute",
				"Dec 1 08:50 Standup in room 2 starts in 10 minutes",
				"Dec 1 08:59 Standup in room 2 starts in 1 minute",
			},
		},
		{
			name:  "new title, then today's instance moved to 09:30",
			split: func(ev *gcal.Event) { ev.Summary = "Standup in room 2" },
			after: func(w *splitWorld) {
				inst, err := w.cal.Instance(standupCal, "standup_R20261130T090000_20261130T090000Z")
				if err != nil {
					w.t.Fatal(err)
				}
				inst.Start.DateTime, inst.End.DateTime = "2026-11-30T09:30:00Z", "2026-11-30T09:45:00Z"
				if err := w.cal.Put(standupCal, inst); err != nil {
					w.t.Fatal(err)
				}
			},
			want: []string{
				"Nov 30 08:50 Standup in room 2: Moved to <!date^1796031000^{date_short_pretty} {time}|2026-11-30 09:30 UTC>, a new reminder will follow",
				"Nov 30 09:20 Standup in room 2 starts in 10 minutes",
				"Nov 30 09:29 Standup in room 2 starts in 1 minute",
				"Dec 1 08:50 Standup in room 2 starts in 10 minutes",
				"Dec 1 08:59 Standup in room 2 starts in 1 minute",
			},
		},
		{
			name: "this and following moved to 09:30",
			split: func(ev *gcal.Event) {
				ev.Start.DateTime, ev.End.DateTime = "2026-11-30T09:30:00Z", "2026-11-30T09:45:00Z"
			},
			want: []string{
				"Nov 30 08:50 Standup: Cancelled",
				"Nov 30 09:20 Standup starts in 10 minutes",
				"Nov 30 09:29 Standup starts in 1 minute",
				"Dec 1 09:20 Standup starts in 10 minutes",
				"Dec 1 09:29 Standup starts in 1 minute",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newSplitWorld(t)
			w.run(at(0, 8, 45), at(0, 8, 53))
			if _, err := w.cal.SplitFollowing(standupCal, "standup_20261130T090000Z", tt.split); err != nil {
				t.Fatal(err)
			}
			w.run(at(0, 8, 53), at(0, 8, 54))
			if tt.after != nil {
				tt.after(w)
			}
			w.run(at(0, 8, 54), at(0, 9, 40))
			w.run(at(1, 8, 45), at(1, 9, 40))
			got := w.reminders()
			if len(got) != len(tt.want) {
				t.Fatalf("reminders = %q, want %q", got, tt.want)
			}
			for i := range got {
				if got[i][:len(tt.want[i])] != tt.want[i] {
					t.Errorf("reminder %d = %q, want it to start %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}
