package snooze_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/notify/action"
	"github.com/meetingbot/meetingbot/snooze"
	"github.com/meetingbot/meetingbot/storage/sqlite"
	"github.com/meetingbot/meetingbot/timer"
	"github.com/stretchr/testify/require"
)

// TestClickAnswers: what a click stores and answers, as the person reads
// it: "In 5 min" from Slack's action_ts, "at start" at the start, "In 5
// min" with under five minutes to go as "at start", a second click the
// first timer, and nothing stored for a meeting started or reminders
// turned off since.
func TestClickAnswers(t *testing.T) {
	ctx := context.Background()
	c := clock.NewFake(t0)
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "bot.db"))
	require.NoError(t, err)
	defer store.Close()
	e, err := timer.New(store, map[string]timer.Handler{meetingbot.TimerKindSnooze: nopHandler{}}, timer.Options{Clock: c})
	require.NoError(t, err)
	subs := func(ctx context.Context, id string) (meetingbot.Subscription, bool, error) {
		return meetingbot.Subscription{ID: id, CalendarID: "team@example.com"}, id == "team", nil
	}
	svc := snooze.NewService(e, store, subs, c.Now, nil)
	start := t0.Add(20 * time.Minute)
	m := meetingbot.Meeting{ID: "ev", Title: "Design <review>", Start: start, End: start.Add(30 * time.Minute)}
	value := action.SnoozeValue("team", meetingbot.Key("ev", 20*time.Minute, start), m)
	oneMinute := action.SnoozeValue("team", meetingbot.Key("ev", time.Minute, start), m) // another reminder of the meeting
	token := func(at time.Time) string { return fmt.Sprintf("<!date^%d^{time}|", at.Unix()) }

	for _, tt := range []struct {
		name, action, value string
		clicked             time.Time
		want                string
	}{
		{"in 5 min, from the action_ts", action.Snooze5m, value, t0.Add(-2 * time.Second), "I'll remind you at " + token(t0.Add(5*time.Minute-2*time.Second))},
		{"in 5 min again", action.Snooze5m, value, t0.Add(time.Second), "Already set: I'll remind you at " + token(t0.Add(5*time.Minute-2*time.Second))},
		{"at start", action.SnoozeStart, value, t0, "I'll remind you at " + token(start)},
		{"at start again", action.SnoozeStart, value, t0, "Already set: I'll remind you at " + token(start)},
		{"at start on the meeting's other reminder", action.SnoozeStart, oneMinute, t0, "Already set: I'll remind you at " + token(start)},
		{"in 5 min on the meeting's other reminder", action.Snooze5m, oneMinute, t0.Add(2 * time.Second), "Already set: I'll remind you at " + token(t0.Add(5*time.Minute-2*time.Second))},
		{"turned off since", action.SnoozeStart, action.SnoozeValue("gone", "k", m), t0, "Those reminders have been turned off since"},
	} {
		got, err := press(ctx, svc, "U1", tt.action, tt.value, tt.clicked)
		require.NoError(t, err, tt.name)
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s: Click = %q, want %q…", tt.name, got, tt.want)
		}
	}
	c.Set(start.Add(-3 * time.Minute))
	soon := action.SnoozeValue("team", "ev2:10m:x", meetingbot.Meeting{ID: "ev2", Title: "Soon", Start: start, End: start.Add(time.Hour)})
	if got, _ := press(ctx, svc, "U1", action.Snooze5m, soon, c.Now()); !strings.HasPrefix(got, "It starts before then: I'll remind you at "+token(start)) {
		t.Errorf("in 5 min, 3 minutes ahead: Click = %q, want at its start", got)
	}
	c.Set(start)
	if got, _ := press(ctx, svc, "U2", action.SnoozeStart, value, c.Now()); !strings.HasPrefix(got, "It has started already") {
		t.Errorf("after the start: Click = %q, want nothing to remind of", got)
	}

	pending, err := svc.Pending(ctx, "U1")
	require.NoError(t, err)
	require.Len(t, pending, 3, "U1's snoozes: in 5 min, at start, and the one of Soon")
	got, err := svc.Cancel(ctx, "U2", pending[0].Key)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(got, "That snooze is not yours"), "Cancel by another person = %q", got)
	got, err = svc.Cancel(ctx, "U1", pending[0].Key)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(got, "Cancelled: no reminder of *Design &lt;review&gt;* at"), "Cancel = %q", got)
	pending, err = svc.Pending(ctx, "U1")
	require.NoError(t, err)
	require.Len(t, pending, 2)
}

// press clicks the snooze button actionID carrying value as self-service
// hears it: the button read, then Click.
func press(ctx context.Context, svc *snooze.Service, user, actionID, value string, clicked time.Time) (string, error) {
	mode, ok := action.SnoozeMode(actionID)
	v, read := action.ParseSnooze(value)
	if !ok || !read {
		return "", fmt.Errorf("snooze button %q, %q does not read", actionID, value)
	}
	return svc.Click(ctx, meetingbot.Snooze{User: user, Mode: mode, Reminder: v.Reminder, Subscription: v.Subscription, Meeting: v.Meeting()}, clicked)
}

type nopHandler struct{}

func (nopHandler) Fire(ctx context.Context, t meetingbot.Timer) timer.Result {
	return timer.Result{State: meetingbot.TimerDone, Code: meetingbot.ReasonSent}
}
