package postgres_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/internal/logger"
	"github.com/meetingbot/meetingbot/storage/postgres"
)

// syncBuf is a log destination safe for the goroutine that waits.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) records() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(s.b.String()), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil {
			out = append(out, rec)
		}
	}
	return out
}

// A DATABASE_URL whose host does not answer is retried forever, since a
// database often starts after its replicas; after a minute the bot says so
// once at ERROR, naming the host, and keeps trying. The minute passes on a
// fake clock.
func TestUnreachableDatabaseIsSaidAfterAMinute(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	logs := &syncBuf{}
	log := logger.New(slog.LevelInfo, "json", logs)
	rawURL := "postgres://meetingbot:secret-pw@127.0.0.1:1/meetingbot?connect_timeout=2"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s, err := postgres.OpenWaiting(ctx, rawURL, postgres.Options{Interval: 30 * time.Second}, log, postgres.Waits{Now: fake.Now, Sleep: fake.Sleep})
		if s != nil || err != nil {
			t.Errorf("OpenWaiting after ctx ended = %v, %v; want nil, nil", s, err)
		}
	}()
	// Attempts at 0, 1, 3, 7, 15, 31, 61 s and 91, 121 s after.
	for deadline := time.Now().Add(30 * time.Second); len(fake.Sleeps()) < 9; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("gave up after 30s waiting for nine attempts")
		}
	}
	cancel()
	<-done
	var warns, errs int
	for _, r := range logs.records() {
		switch r["level"] {
		case "WARN":
			warns++
		case "ERROR":
			errs++
			if warns != 6 || r["host"] != "127.0.0.1:1" || r["for"] != "1m1s" || !strings.Contains(r["msg"].(string), "check the host and port in DATABASE_URL") {
				t.Errorf("ERROR after %d warnings: %v; want it after the 6 of the first minute, naming host 127.0.0.1:1, 1m1s", warns, r)
			}
		}
	}
	if errs != 1 || warns < 8 {
		t.Errorf("%d ERROR and %d WARN lines, want one ERROR and a WARN per attempt", errs, warns)
	}
	if strings.Contains(logs.b.String(), "secret-pw") {
		t.Errorf("the log shows DATABASE_URL's password")
	}
}
