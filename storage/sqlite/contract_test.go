package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/meetingbot/meetingbot/storage/storetest"
)

// TestContract runs the store contract on SQLite: each test on a new file,
// each Store one process on it.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		path := filepath.Join(t.TempDir(), "bot.db")
		return func(t *testing.T) storetest.Store {
			return open(t, path)
		}
	})
}
