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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFollowMovesAtStartSnoozesWithTheirMeeting: a meeting seen moving
// (earlier, or later) before its snooze's instant takes its "at start"
// snoozes along: the Home tab lists the new start, a click on the moved
// meeting's reminder finds that timer, and "In 5 min", snoozes of other
// meetings and of other calendars stay as they are.
func TestFollowMovesAtStartSnoozesWithTheirMeeting(t *testing.T) {
	ctx := context.Background()
	c := clock.NewFake(t0)
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "bot.db"))
	require.NoError(t, err)
	defer store.Close()
	e, err := timer.New(store, map[string]timer.Handler{meetingbot.TimerKindSnooze: nopHandler{}}, timer.Options{Clock: c})
	require.NoError(t, err)
	subs := func(ctx context.Context, id string) (meetingbot.Subscription, bool, error) {
		return meetingbot.Subscription{ID: id, CalendarID: id + "@example.com"}, true, nil
	}
	svc := snooze.NewService(e, store, subs, c.Now, nil)
	start := t0.Add(30 * time.Minute)
	meeting := func(id string, at time.Time) meetingbot.Meeting {
		return meetingbot.Meeting{ID: id, Title: "Meeting " + id, Start: at, End: at.Add(30 * time.Minute)}
	}
	click := func(user, actionID, sub string, m meetingbot.Meeting) string {
		t.Helper()
		got, err := press(ctx, svc, user, actionID, action.SnoozeValue(sub, meetingbot.Key(m.ID, 10*time.Minute, m.Start), m), c.Now())
		require.NoError(t, err)
		return got
	}
	click("U1", action.SnoozeStart, "team", meeting("ev1", start))
	click("U1", action.SnoozeStart, "team", meeting("ev2", start))
	click("U1", action.SnoozeStart, "team", meeting("ev3", start))
	click("U2", action.Snooze5m, "team", meeting("ev1", start))
	click("U3", action.SnoozeStart, "other", meeting("ev1", start)) // the same ID on another calendar

	earlier, later := t0.Add(10*time.Minute), t0.Add(2*time.Hour)
	private := meeting("ev3", later)
	private.Title, private.Private = "", true
	moved, err := svc.Follow(ctx, "team@example.com", []meetingbot.Meeting{meeting("ev1", earlier), meeting("ev2", start), private})
	require.NoError(t, err)
	assert.Equal(t, 2, moved, "snoozes moved: ev1 earlier, ev3 later")

	fireAt := func(user string) map[string]time.Time {
		pending, err := svc.Pending(ctx, user)
		require.NoError(t, err)
		out := map[string]time.Time{}
		for _, tm := range pending {
			s, _ := meetingbot.ParseSnooze(tm)
			out[s.Meeting.ID+":"+string(s.Mode)] = tm.FireAt
			if s.Meeting.ID == "ev3" && s.Meeting.Title != "Meeting ev3" {
				t.Errorf("the private meeting's snooze shows %q, want the title the person saw", s.Meeting.Title)
			}
		}
		return out
	}
	for _, tt := range []struct {
		user string
		want map[string]time.Time
	}{
		{"U1", map[string]time.Time{"ev1:start": earlier, "ev2:start": start, "ev3:start": later}},
		{"U2", map[string]time.Time{"ev1:5m": t0.Add(5 * time.Minute)}},
		{"U3", map[string]time.Time{"ev1:start": start}},
	} {
		assert.Equal(t, tt.want, fireAt(tt.user), "%s's pending snoozes (the Home tab) after ev1 moved to 08:10 and ev3 to 10:00", tt.user)
	}

	// The moved meeting's own reminder: its button finds the moved timer.
	got := click("U1", action.SnoozeStart, "team", meeting("ev1", earlier))
	if want := fmt.Sprintf("Already set: I'll remind you at <!date^%d^", earlier.Unix()); !strings.HasPrefix(got, want) {
		t.Errorf("a click on the moved meeting's reminder: Click = %q, want %q…", got, want)
	}
	moved, err = svc.Follow(ctx, "team@example.com", []meetingbot.Meeting{meeting("ev1", earlier), meeting("ev2", start)})
	require.NoError(t, err)
	assert.Zero(t, moved, "snoozes moved when nothing moved")

	// At its instant a snooze is its fire's: following it then would
	// skip the fire's own look at the meeting.
	c.Set(start)
	moved, err = svc.Follow(ctx, "team@example.com", []meetingbot.Meeting{meeting("ev2", start.Add(time.Hour))})
	require.NoError(t, err)
	assert.Zero(t, moved, "a snooze moved at its instant")
}

// TestFollowAllCatchesUpWithTheReading: a move the bot read and did not
// follow (it died in between) is followed from its reading of the
// calendar; a calendar it holds no reading of, or cannot read, leaves its
// snoozes as they are and does not stop the others.
func TestFollowAllCatchesUpWithTheReading(t *testing.T) {
	ctx := context.Background()
	c := clock.NewFake(t0)
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "bot.db"))
	require.NoError(t, err)
	defer store.Close()
	e, err := timer.New(store, map[string]timer.Handler{meetingbot.TimerKindSnooze: nopHandler{}}, timer.Options{Clock: c})
	require.NoError(t, err)
	subs := func(ctx context.Context, id string) (meetingbot.Subscription, bool, error) {
		return meetingbot.Subscription{ID: id, CalendarID: id + "@example.com"}, true, nil
	}
	svc := snooze.NewService(e, store, subs, c.Now, nil)
	start, earlier := t0.Add(30*time.Minute), t0.Add(15*time.Minute)
	for _, sub := range []string{"a", "b", "c"} {
		m := meetingbot.Meeting{ID: "ev-" + sub, Title: "Sync", Start: start, End: start.Add(time.Hour)}
		_, err := press(ctx, svc, "U1", action.SnoozeStart, action.SnoozeValue(sub, meetingbot.Key(m.ID, 10*time.Minute, start), m), t0)
		require.NoError(t, err)
	}
	read := func(ctx context.Context, cal string) ([]meetingbot.Meeting, bool, error) {
		switch cal {
		case "a@example.com":
			return []meetingbot.Meeting{{ID: "ev-a", Title: "Sync", Start: earlier, End: earlier.Add(time.Hour)}}, true, nil
		case "b@example.com":
			return nil, false, fmt.Errorf("database is locked")
		}
		return nil, false, nil
	}
	moved, err := svc.FollowAll(ctx, read)
	assert.ErrorContains(t, err, "b@example.com", "FollowAll's error names the calendar it could not read")
	assert.Equal(t, 1, moved, "snoozes moved")
	pending, err := svc.Pending(ctx, "U1")
	require.NoError(t, err)
	got := map[string]time.Time{}
	for _, tm := range pending {
		s, _ := meetingbot.ParseSnooze(tm)
		got[s.Meeting.ID] = tm.FireAt
	}
	assert.Equal(t, map[string]time.Time{"ev-a": earlier, "ev-b": start, "ev-c": start}, got, "U1's snoozes after FollowAll")
}
