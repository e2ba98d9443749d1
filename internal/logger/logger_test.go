package logger_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/internal/logger"
)

// Durations in the JSON logs read as Go writes them, "1m30s", not as
// nanoseconds.
func TestJSONLogsWriteDurationsAsText(t *testing.T) {
	var b bytes.Buffer
	logger.New(slog.LevelInfo, "json", &b).Warn("database unreachable at start-up; retrying", "in", 30*time.Second, "lease", 90*time.Second, "n", 3)
	got := b.String()
	for _, want := range []string{`"in":"30s"`, `"lease":"1m30s"`, `"n":3`} {
		if !strings.Contains(got, want) {
			t.Errorf("log line %s lacks %s", strings.TrimSpace(got), want)
		}
	}
}
