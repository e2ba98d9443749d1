package scheduler_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/meetingbot/meetingbot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// levelHandler records each log record's level and message.
type levelHandler struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *levelHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *levelHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r)
	return nil
}
func (h *levelHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *levelHandler) WithGroup(string) slog.Handler      { return h }

// atLeast returns the messages logged at level or above.
func (h *levelHandler) atLeast(level slog.Level) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.recs {
		if r.Level >= level {
			out = append(out, r.Level.String()+" "+r.Message)
		}
	}
	return out
}

// TestStopDuringATickLogsNothingAlarming stops the process (cancels the
// tick's context) while a reminder is in flight, with another reminder of
// the same subscription still to come and another subscription's calendar
// read cut short: the send in flight is finished and recorded, and nothing
// is logged at WARN or ERROR, for a deploy is not a failure.
func TestStopDuringATickLogsNothingAlarming(t *testing.T) {
	e := newEnv(t, sub("alice"), sub("bob"))
	logs := &levelHandler{}
	e.opts.Logger = slog.New(logs)
	e.opts.MaxReads = 1 // alice, then bob
	e.restart()
	e.meeting("alice@example.com", "first", at("09:05"))
	e.meeting("alice@example.com", "second", at("09:06"))
	e.cal.Fail("bob@example.com", context.Canceled) // the read the stop cut short

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	e.fakeSlack.before = func(meetingbot.Reminder) { stop() } // SIGTERM mid-send
	e.clock.Set(at("08:57"))
	require.NoError(t, e.sched.Tick(ctx), "Tick()")

	got := e.fakeSlack.Deliveries()
	if assert.Len(t, got, 1, "deliveries: the one in flight") {
		assert.Equal(t, "first", got[0].Meeting.ID)
	}
	assert.Empty(t, logs.atLeast(slog.LevelWarn), "logged during a clean stop at WARN or above")

	// The next process picks up where this one stopped, prune included.
	e.fakeSlack.before = nil
	e.cal.Fail("bob@example.com", nil)
	e.restart()
	e.tickAt(at("08:58"))
	assert.Len(t, e.fakeSlack.Deliveries(), 2, "deliveries after restart")
}
