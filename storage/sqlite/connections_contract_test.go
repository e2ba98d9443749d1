package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/meetingbot/meetingbot/storage/storetest"
)

// TestConnectionsContract runs the contract of the connection tables on
// SQLite: each test on a new file, each Store one process on it.
func TestConnectionsContract(t *testing.T) {
	storetest.RunConnections(t, func(t *testing.T) storetest.ConnectionOpener {
		path := filepath.Join(t.TempDir(), "bot.db")
		return func(t *testing.T) storetest.ConnectionStore { return open(t, path) }
	})
}
