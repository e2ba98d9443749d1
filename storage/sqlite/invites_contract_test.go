package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/meetingbot/meetingbot/storage/storetest"
)

// TestInvitesContract runs the contract of migration 016 on SQLite: each
// test on a new file, each Store one process on it.
func TestInvitesContract(t *testing.T) {
	storetest.RunInvites(t, func(t *testing.T) storetest.InviteOpener {
		path := filepath.Join(t.TempDir(), "bot.db")
		return func(t *testing.T) storetest.InviteStore { return open(t, path) }
	})
}
