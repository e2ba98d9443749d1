package mirror_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/internal/retry"
	"github.com/meetingbot/meetingbot/mirror"
)

// source returns a Calendar client on w's emulator with edit applied to
// its configuration, as the mirror's Calendar.
func (w *world) source(edit func(*calendar.Config)) calendar.Mirrored {
	w.t.Helper()
	path := filepath.Join(w.t.TempDir(), "key.json")
	require.NoError(w.t, os.WriteFile(path, w.cal.ServiceAccountJSON(), 0o600))
	cfg := calendar.Config{CredentialsFile: path, Endpoint: w.cal.Endpoint(), HTTPClient: w.cal.Client()}
	edit(&cfg)
	src, err := calendar.New(context.Background(), cfg)
	require.NoError(w.t, err)
	return calendar.Mirrored{Source: src}
}

// The calendar answers 503 for a while: a sweep's read answers from the
// mirror's last reading, saying when it was made and why it is not newer,
// without retrying past the calendar's next trigger (the 08:10 meeting's,
// 3 seconds away: a backoff of 15 s would make it late); once the
// calendar answers, the next read syncs at once.
func TestOutageAnswersFromTheLastReading(t *testing.T) {
	w := newWorld(t)
	w.put("a", at(0).Add(20*time.Minute)) // 08:20, reminded at 08:10
	var slept []time.Duration
	w.src = w.source(func(c *calendar.Config) {
		c.Sleep = func(ctx context.Context, d time.Duration) error { slept = append(slept, d); return ctx.Err() }
		c.Retry = retry.Policy{} // 5 attempts, 1s to 30s
	})
	m := w.mirror(mirror.Options{Resync: time.Minute, Tick: time.Minute})
	s := sub("alice", alice)
	assert.Equal(t, []string{"a 08:20"}, w.meetings(m, s, start, at(1)))
	read := w.clock.Now()

	w.clock.Set(at(0).Add(10*time.Minute - 3*time.Second))
	w.cal.QueueFaults(alice, calendartest.Unavailable, calendartest.Unavailable, calendartest.Unavailable, calendartest.Unavailable, calendartest.Unavailable)
	lists := w.lists()
	ms, err := m.Meetings(t.Context(), s, start, at(1))
	var stale *meetingbot.StaleReading
	require.True(t, errors.As(err, &stale), "Meetings during the outage = %v, want a StaleReading", err)
	assert.Equal(t, []string{"a 08:20"}, show(ms), "the meetings of the last reading")
	assert.Equal(t, meetingbot.StaleUnavailable, stale.Why)
	assert.Equal(t, read, stale.ReadAt, "when the reading was made")
	assert.Less(t, w.lists()-lists, 5, "attempts before answering from the reading, with the next trigger 3 s away (sleeps %v)", slept)

	// The outage ends with the faults queued; the first read after it
	// syncs, with no backoff left over from the outage.
	w.put("b", at(0).Add(30*time.Minute))
	for range 5 {
		ms, err = m.Meetings(t.Context(), s, start, at(1))
		if err == nil {
			break
		}
	}
	require.NoError(t, err, "Meetings once the calendar answers")
	assert.Equal(t, []string{"a 08:20", "b 08:30"}, show(ms), "the first read after the outage")
	assert.Equal(t, 6, w.lists()-lists, "events.list calls: the 5 answered 503, then the one that synced")
}

// A sweep's resync that the Calendar quota could not serve soon waits for
// nothing: it answers from the last reading, saying the quota is why, and
// sends no request; the calendar is synced when the quota allows.
func TestResyncShortOfQuotaAnswersFromTheLastReading(t *testing.T) {
	w := newWorld(t)
	w.put("a", at(0).Add(20*time.Minute))
	w.src = w.source(func(c *calendar.Config) { c.UserQuota = 1 }) // one a minute
	m := w.mirror(mirror.Options{Resync: time.Minute, Tick: time.Minute})
	s := sub("alice", alice)
	assert.Equal(t, []string{"a 08:20"}, w.meetings(m, s, start, at(1)))
	w.clock.Advance(time.Minute)
	lists := w.lists()
	ms, err := m.Meetings(t.Context(), s, start, at(1))
	var stale *meetingbot.StaleReading
	require.True(t, errors.As(err, &stale), "Meetings with the quota spent = %v, want a StaleReading", err)
	assert.Equal(t, meetingbot.StaleQuota, stale.Why)
	assert.ErrorIs(t, err, meetingbot.ErrQuotaWait)
	assert.Equal(t, []string{"a 08:20"}, show(ms))
	assert.Equal(t, 0, w.lists()-lists, "requests sent")
}

// A calendar the mirror never read has nothing to answer from: its read
// fails as the calendar's does.
func TestOutageOfACalendarNeverReadFails(t *testing.T) {
	w := newWorld(t)
	w.src = w.source(func(c *calendar.Config) {
		c.Sleep = func(ctx context.Context, d time.Duration) error { return ctx.Err() }
	})
	w.cal.QueueFaults(alice, calendartest.Unavailable, calendartest.Unavailable, calendartest.Unavailable, calendartest.Unavailable, calendartest.Unavailable)
	m := w.mirror(mirror.Options{})
	_, err := m.Meetings(t.Context(), sub("alice", alice), start, at(1))
	var stale *meetingbot.StaleReading
	assert.False(t, errors.As(err, &stale), "Meetings of a calendar never read = %v, want the calendar's error", err)
	assert.Error(t, err)
}
