package mirror_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/mirror"
)

type syncedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncedBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncedBuffer) count(substr string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(s.b.String(), substr)
}

// When Google refuses the notification address because its domain is not
// verified, the mirror says so once, at start-up, with the fix; it does
// not ask again for every calendar every minute, but tries one watch
// every AddressRetry; the calendars are still synced, and once the
// domain is verified every calendar gets its channel.
func TestUnverifiedAddressIsSaidOnceAndRetriedSlowly(t *testing.T) {
	w := newWorld(t)
	cals := []string{alice, "bob@example.com", "carol@example.com"}
	for _, c := range cals[1:] {
		w.cal.AddCalendar(c)
	}
	w.cal.AddCalendar(alice)
	w.put("a", at(1))
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	w.cal.SetNotifyClient(srv.Client())
	w.cal.RequireVerifiedDomains("bot.example.com") // not the address's host
	logs := &syncedBuffer{}
	m := w.mirror(mirror.Options{
		Push: w.src, Address: srv.URL + "/google/notify",
		Calendars: func(context.Context) ([]string, error) { return cals, nil },
		Logger:    slog.New(slog.NewTextHandler(logs, nil)),
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	rounds := 1
	waitRound := func() {
		t.Helper()
		require.Eventually(t, func() bool { return w.obs.roundsDone() >= rounds }, 5*time.Second, time.Millisecond, "maintenance round %d", rounds)
	}
	// minutes moves the clock one maintenance at a time, each round over
	// before the next: a round reads the clock where its timer fired.
	minutes := func(n int) {
		t.Helper()
		for range n {
			w.clock.Advance(mirror.DefaultMaintain)
			rounds++
			waitRound()
		}
	}
	waitRound()
	require.Equal(t, 1, logs.count("Search Console"), "the refusal logged with the fix")
	watches := w.cal.RequestsTo(calendartest.MethodWatch)
	assert.LessOrEqual(t, watches, len(cals), "events.watch calls of the first round")
	retry := int(mirror.AddressRetry / mirror.DefaultMaintain)
	minutes(retry - 1)
	assert.Equal(t, watches, w.cal.RequestsTo(calendartest.MethodWatch), "events.watch calls until AddressRetry has passed")
	assert.Equal(t, 1, logs.count("level=ERROR"), "error lines: %s", logs.b.String())
	assert.Equal(t, []string{"a 09:00"}, w.meetings(m, sub("alice", alice), start, at(24)), "the calendar is still read")

	minutes(1)
	assert.Equal(t, watches+1, w.cal.RequestsTo(calendartest.MethodWatch), "events.watch calls of the retry after AddressRetry")

	w.cal.RequireVerifiedDomains("127.0.0.1")
	minutes(retry)
	require.Eventually(t, func() bool { return len(w.cal.Channels()) == len(cals) }, 5*time.Second, time.Millisecond, "a channel on every calendar once the domain is verified")
	assert.Equal(t, 1, logs.count("level=ERROR"), "error lines")
}
