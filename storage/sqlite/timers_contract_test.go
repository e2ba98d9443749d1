package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/meetingbot/meetingbot/storage/storetest"
)

// TestTimerContract runs the contract of durable timers on SQLite: each
// test on a new file, each Store one process on it.
func TestTimerContract(t *testing.T) {
	storetest.RunTimers(t, func(t *testing.T) storetest.TimerOpener {
		path := filepath.Join(t.TempDir(), "bot.db")
		return func(t *testing.T) storetest.TimerStore { return open(t, path) }
	})
}
