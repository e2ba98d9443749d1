//go:build unix

package sqlite

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOwnerAliveChangesNothing: the ledger asks ownerAlive on every claim
// of a key in flight; asking must not remove a dead owner's file, which
// only Open's sweep does.
func TestOwnerAliveChangesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.db")
	live := openStore(t, path)
	dead := filepath.Join(ownersDir(path), "host-123-deadbeef.lock") // left by a killed process
	require.NoError(t, os.WriteFile(dead, nil, 0o600))

	assert.True(t, ownerAlive(path, live.Owner()), "ownerAlive(live owner)")
	assert.False(t, ownerAlive(path, "host-123-deadbeef"), "ownerAlive(killed owner)")
	assert.False(t, ownerAlive(path, "host-456-never"), "ownerAlive(owner with no file)")
	assert.FileExists(t, dead, "killed owner's file after ownerAlive")

	sweepOwners(path, live.Owner())
	assert.NoFileExists(t, dead, "killed owner's file after the sweep")
	assert.True(t, ownerAlive(path, live.Owner()), "ownerAlive(live owner) after the sweep")
}

func openStore(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(t.Context(), path)
	require.NoError(t, err, "Open(%s)", path)
	t.Cleanup(func() { s.Close() })
	return s
}
