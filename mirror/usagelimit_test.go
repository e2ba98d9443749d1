package mirror_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/internal/retry"
	"github.com/meetingbot/meetingbot/mirror"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/scheduler"
)

// Google answers a usage limit: a read answers from the mirror's last
// reading and says the quota is why, whether the limit is a minute's
// (retried first), the project's day or Calendar's own (not retried, as
// they last hours); nothing is forgotten, and once Google answers again
// the read syncs.
func TestUsageLimitAnswersFromTheLastReading(t *testing.T) {
	for _, tt := range []struct {
		name   string
		faults []calendartest.Fault
		after  time.Duration // until the budget lowered has a place again
	}{
		{"per-minute quota", slices.Repeat([]calendartest.Fault{calendartest.UserMinuteLimited}, 4), 0},
		{"daily limit", []calendartest.Fault{calendartest.DailyLimited}, time.Minute},
		{"Calendar usage limits", []calendartest.Fault{calendartest.UsageLimited}, time.Minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.put("a", at(0).Add(20*time.Minute))
			w.src = w.source(func(c *calendar.Config) {
				c.Now, c.Sleep = w.clock.Now, w.clock.Sleep
				c.Retry = retry.Policy{MaxAttempts: 2, Base: time.Millisecond, Max: time.Millisecond}
			})
			m := w.mirror(mirror.Options{Resync: time.Minute, Tick: time.Minute})
			s := sub("alice", alice)
			assert.Equal(t, []string{"a 08:20"}, w.meetings(m, s, start, at(1)))
			read := w.clock.Now()

			w.clock.Advance(time.Minute)
			w.cal.QueueFaults(alice, tt.faults...)
			w.put("b", at(0).Add(30*time.Minute))
			lists := w.lists()
			for _, fresh := range []bool{false, true} {
				var ms []meetingbot.Meeting
				var err error
				if fresh {
					// The check before reminders, bound as the scheduler's.
					ctx, cancel := context.WithTimeout(t.Context(), time.Second)
					ms, err = m.FreshMeetings(ctx, s, start, at(1))
					cancel()
				} else {
					ms, err = m.Meetings(t.Context(), s, start, at(1))
				}
				var stale *meetingbot.StaleReading
				require.True(t, errors.As(err, &stale), "read (fresh %v) while Google answers %s = %v, want a StaleReading", fresh, tt.name, err)
				assert.Equal(t, meetingbot.StaleQuota, stale.Why, "why the reading is old")
				assert.Equal(t, read, stale.ReadAt)
				assert.False(t, meetingbot.IsPermanent(err), "a usage limit is not the operator's to fix at once: %v", err)
				assert.NotContains(t, err.Error(), "share", "advice")
				assert.Equal(t, []string{"a 08:20"}, show(ms), "the meetings of the last reading")
			}
			assert.Equal(t, len(tt.faults), w.lists()-lists, "events.list calls while limited: a per-minute quota's retried, a lasting limit's once, then the budget lowered has no place")

			w.clock.Advance(tt.after)
			assert.Equal(t, []string{"a 08:20", "b 08:30"}, w.meetings(m, s, start, at(1)), "the first read once Google answers")
		})
	}
}

// quotaWorld is the real scheduler over the mirror, the Calendar client
// and the Slack client, on the emulators, on a fake clock, with the
// client told Google's default quotas (600 a minute per user), which a
// test's emulator may enforce smaller: each sweep of each subscription,
// 30 s apart, syncs its calendar.
type quotaWorld struct {
	*world
	slack *slacktest.Server
	sched *scheduler.Scheduler

	mu      sync.Mutex
	changes []calendar.QuotaChange
}

func newQuotaWorld(t *testing.T, cals []string) *quotaWorld {
	t.Helper()
	w := &quotaWorld{world: newWorld(t), slack: slacktest.NewServer()}
	t.Cleanup(w.slack.Close)
	w.slack.SetClock(w.clock.Now)
	w.slack.AddChannel(slacktest.Channel{ID: "C0QUOTA001", Name: "quota", Member: true})
	w.src = w.source(func(c *calendar.Config) {
		c.Now, c.Sleep = w.clock.Now, w.clock.Sleep
		// Backoffs short enough that a sweep's retry, which moves the
		// clock, never reaches a reminder's instant.
		c.Retry = retry.Policy{MaxAttempts: 2, Base: time.Millisecond, Max: time.Millisecond}
		c.QuotaChanged = func(ch calendar.QuotaChange) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.changes = append(w.changes, ch)
		}
	})
	m := w.mirror(mirror.Options{Resync: 30 * time.Second, Tick: 30 * time.Second, Lead: 50 * time.Millisecond})
	slack := notify.New(notify.Config{
		Token: slacktest.Token, APIURL: w.slack.URL(), Now: w.clock.Now,
		Interval: -1, Retry: retry.Policy{MaxAttempts: 1}, CallTimeout: 5 * time.Second,
	})
	var subs []meetingbot.Subscription
	for _, cal := range cals {
		subs = append(subs, meetingbot.Subscription{ID: cal, CalendarID: cal, Destination: "C0QUOTA001", Offsets: []time.Duration{5 * time.Minute}})
	}
	var err error
	w.sched, err = scheduler.New(subs, m, slack, w.store, scheduler.Options{
		Clock: w.clock, Interval: 30 * time.Second, CheckTimeout: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	return w
}

// run sweeps every 30 s from the clock's instant until to; the timers
// planned fire as the clock moves.
func (w *quotaWorld) run(to time.Time, at func(now time.Time)) {
	w.t.Helper()
	for now := w.clock.Now().Truncate(30 * time.Second); now.Before(to); now = now.Add(30 * time.Second) {
		if now.After(w.clock.Now()) {
			w.clock.Set(now)
		}
		if at != nil {
			at(now)
		}
		require.NoError(w.t, w.sched.Tick(context.Background()), "Tick at %v", now)
	}
}

// reminders returns, per meeting title, the instants its reminders were
// posted.
func (w *quotaWorld) reminders() map[string][]time.Time {
	out := map[string][]time.Time{}
	for _, m := range w.slack.Messages() {
		title, _, _ := strings.Cut(m.Text, " starts in")
		out[title] = append(out[title], m.Posted)
	}
	return out
}

func (w *quotaWorld) quotaChanges() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, c := range w.changes {
		out = append(out, fmt.Sprintf("%s %s %d/%d", c.Scope, c.Limit, c.PerMinute, c.Configured))
	}
	return out
}

// check asserts that each meeting of want got one reminder, at its
// trigger or after it and before its start.
func (w *quotaWorld) check(want map[string]time.Time) {
	w.t.Helper()
	got := w.reminders()
	for title, startAt := range want {
		posted := got[title]
		if len(posted) != 1 {
			w.t.Errorf("%s (at %s): reminded at %v, want once", title, startAt.Format("15:04"), posted)
			continue
		}
		if trigger := startAt.Add(-5 * time.Minute); posted[0].Before(trigger) || !posted[0].Before(startAt) {
			w.t.Errorf("%s: reminded at %s, want from %s and before %s", title, posted[0].Format("15:04:05"), trigger.Format("15:04:05"), startAt.Format("15:04"))
		}
	}
	for title := range got {
		if _, ok := want[title]; !ok {
			w.t.Errorf("reminded of %q, which is no meeting", title)
		}
	}
}

// Three calendars shared with the service account, one user for Google,
// whose quota is 4 calls a minute where the client was told 600: each
// sweep's sync draws rate-limit answers until the client has lowered its
// pace below Google's, and the calendars not read in time are reminded
// from their last reading; a meeting created while the quota is short is
// seen and reminded. At 08:30 the quota is lifted (the project got a
// larger one) and the client's pace grows back to 600. No reminder is
// lost or doubled.
func TestShortPerMinuteQuotaLosesNoReminder(t *testing.T) {
	cals := []string{"a@example.com", "b@example.com", "c@example.com"}
	w := newQuotaWorld(t, cals)
	want := map[string]time.Time{}
	for i, cal := range cals {
		for j := range 6 {
			id := fmt.Sprintf("%c%d", 'a'+i, j)
			s := at(0).Add(time.Duration(10*j+i) * time.Minute) // 08:00, 08:10, … and a minute apart by calendar
			require.NoError(t, w.cal.Put(cal, calendartest.NewEvent(id, "Meeting "+id, s, s.Add(30*time.Minute))))
			want["Meeting "+id] = s
		}
	}
	w.cal.SetQuota(calendartest.Quota{PerUserPerMinute: 4})
	w.clock.Set(at(0).Add(-10 * time.Minute)) // 07:50
	late := at(0).Add(27 * time.Minute)       // created at 08:05 for 08:27
	want["Meeting late"] = late
	w.run(at(0).Add(30*time.Minute), func(now time.Time) {
		if now.Equal(at(0).Add(5 * time.Minute)) {
			require.NoError(t, w.cal.Put(cals[0], calendartest.NewEvent("late", "Meeting late", late, late.Add(30*time.Minute))))
		}
	})
	refused := w.cal.QuotaRefusals()["rateLimitExceeded"]
	lowered := w.quotaChanges()
	assert.Positive(t, refused, "calls Google refused over its quota")
	require.NotEmpty(t, lowered, "QuotaChanged while the quota is short")
	assert.Equal(t, "user per_minute 300/600", lowered[0], "the first answer halves the user's pace")

	w.cal.SetQuota(calendartest.Quota{}) // 08:30: the project's quota is raised
	w.run(at(1), nil)
	assert.Zero(t, w.cal.QuotaRefusals()["rateLimitExceeded"], "refusals once the quota is lifted")
	changes := w.quotaChanges()
	t.Logf("%d calls refused while the quota was short, %d changes of the client's pace", refused, len(lowered))
	assert.Equal(t, "user  600/600", changes[len(changes)-1], "the client's pace once the answers stopped (changes %v)", changes)
	w.check(want)
}

// One calendar, and a project whose other clients spent 35 of its 40
// calls of the day by 07:45: Google answers dailyLimitExceeded until
// midnight Pacific time (08:00 UTC in winter). The client drops to one
// call a minute, the mirror's last reading reminds of every meeting
// meanwhile, a meeting created during the limit is seen once the day
// resets, and the pace grows back.
func TestDailyLimitLosesNoReminder(t *testing.T) {
	w := newQuotaWorld(t, []string{alice})
	want := map[string]time.Time{}
	for j := range 3 {
		id := fmt.Sprintf("m%d", j)
		s := at(0).Add(time.Duration(5*j-5) * time.Minute) // 07:55, 08:00, 08:05
		require.NoError(t, w.cal.Put(alice, calendartest.NewEvent(id, "Meeting "+id, s, s.Add(30*time.Minute))))
		want["Meeting "+id] = s
	}
	w.cal.SetQuota(calendartest.Quota{PerDay: 40})
	w.clock.Set(at(0).Add(-15 * time.Minute)) // 07:45
	other := w.source(func(c *calendar.Config) { c.ProjectQuota, c.UserQuota = 100000, 100000 })
	for range 35 {
		_, err := other.Meetings(t.Context(), sub("other", alice), at(0), at(1))
		require.NoError(t, err, "another client's call")
	}
	late := at(0).Add(8 * time.Minute) // created at 07:56 for 08:08
	want["Meeting late"] = late
	w.run(at(0).Add(10*time.Minute), func(now time.Time) {
		if now.Equal(at(0).Add(-4 * time.Minute)) {
			require.NoError(t, w.cal.Put(alice, calendartest.NewEvent("late", "Meeting late", late, late.Add(30*time.Minute))))
		}
		if now.Equal(at(0)) {
			assert.Positive(t, w.cal.QuotaRefusals()["dailyLimitExceeded"], "answers of the daily limit before midnight Pacific time")
		}
	})
	changes := w.quotaChanges()
	require.NotEmpty(t, changes)
	assert.Equal(t, "project daily 1/10000", changes[0], "the daily limit drops the project's pace to a call a minute")
	assert.Equal(t, "project  10000/10000", changes[len(changes)-1], "the pace once the day reset (changes %v)", changes)
	w.check(want)
}
