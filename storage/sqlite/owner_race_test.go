//go:build unix

package sqlite

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests put another process's steps inside the windows of the owner
// lock protocol (owner_unix.go) through testHook, so that each interleaving
// runs the same way every time.

func setHook(t *testing.T, h func(point, name string)) {
	t.Helper()
	testHook = h
	t.Cleanup(func() { testHook = nil })
}

// assertOwnerKeepsClaims checks what the exactly-once promise rests on:
// while a lives, b can neither judge it dead nor take a key it is sending.
func assertOwnerKeepsClaims(t *testing.T, a, b *Store) {
	t.Helper()
	assert.FileExists(t, filepath.Join(ownersDir(a.path), a.Owner()+".lock"), "live owner's lock file")
	assert.True(t, ownerAlive(b.path, a.Owner()), "ownerAlive(live owner)")

	now := time.Date(2026, 11, 30, 8, 50, 0, 0, time.UTC)
	e := meetingbot.Entry{Subscription: "alice", Key: "k-" + b.Owner(), EventID: "ev", Offset: 10 * time.Minute,
		Start: now.Add(10 * time.Minute), TriggerAt: now}
	st, _, err := a.Claim(t.Context(), e, now, now.Add(2*time.Minute))
	require.NoError(t, err)
	require.Equal(t, meetingbot.Claimed, st, "first claim")
	st, _, err = b.Claim(t.Context(), e, now.Add(time.Second), now.Add(2*time.Minute))
	require.NoError(t, err)
	assert.Equal(t, meetingbot.Busy, st, "claim of a key a live owner is sending")
}

// TestSweepInOwnersLockWindowKeepsOwnerAlive: process b's Open sweeps the
// owners' directory after a has created its lock file and before a has
// locked it. a must still be alive to everyone once its Open returns.
func TestSweepInOwnersLockWindowKeepsOwnerAlive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.db")
	var b *Store
	started := false
	setHook(t, func(point, name string) {
		if point == "owner opened" && !started {
			started = true
			b = openStore(t, path)
		}
	})
	a := openStore(t, path)
	require.NotNil(t, b, "second Open ran inside the first one's lock window")
	assertOwnerKeepsClaims(t, a, b)

	assertOwnerKeepsClaims(t, a, openStore(t, path)) // after a third process's sweep
}

// TestOwnerLockOutlastsASweepHoldingIt: another process's sweep has locked
// a's new file (judging it dead) when a tries to lock it. a's Open waits the
// sweep out instead of failing, and ends up alive.
func TestOwnerLockOutlastsASweepHoldingIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.db")
	locked, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	released := false
	opens := 0
	setHook(t, func(point, name string) {
		switch point {
		case "sweep locked":
			close(locked)
			<-release
		case "owner opened":
			opens++
			switch opens {
			case 1: // the sweep takes the lock of a's new file
				go func() { defer close(done); sweepOwners(path, "sweeper") }()
				<-locked
			case 2: // and finishes: removes the file and unlocks it
				released = true
				close(release)
				<-done
			}
		}
	})
	t.Cleanup(func() {
		if !released {
			close(release)
		}
		<-done
	})

	a, err := Open(t.Context(), path)
	require.NoError(t, err, "Open while another process's sweep holds the new lock file")
	t.Cleanup(func() { a.Close() })
	assertOwnerKeepsClaims(t, a, openStore(t, path))
}

// TestSweepLeavesAFileThatReplacedTheOneItLocked: sweep s1 opens owner's
// file before owner has locked it; before s1 locks it, sweep s2 removes it
// and owner creates and locks a new one. s1 then locks the removed file
// without trouble and must not remove the new one by its name.
func TestSweepLeavesAFileThatReplacedTheOneItLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.db")
	require.NoError(t, os.MkdirAll(ownersDir(path), 0o700))
	const owner = "host-1-0a0b0c"
	name := filepath.Join(ownersDir(path), owner+".lock")
	require.NoError(t, os.WriteFile(name, nil, 0o600)) // created, not yet locked

	var live *os.File
	started := false
	setHook(t, func(point, _ string) {
		if point == "sweep opened" && !started {
			started = true
			sweepOwners(path, "s2")
			var err error
			live, err = lockOwner(path, owner)
			require.NoError(t, err, "owner's lock after s2's sweep")
		}
	})
	sweepOwners(path, "s1")
	require.NotNil(t, live, "s2 and owner ran inside s1's window")
	t.Cleanup(func() { releaseOwner(path, live) })

	assert.FileExists(t, name, "live owner's lock file after s1's sweep")
	assert.True(t, ownerAlive(path, owner), "ownerAlive(live owner) after s1's sweep")
}
