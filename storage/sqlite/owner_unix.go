//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// An owner's liveness is a flock(2) on a file of its own beside the
// database: the kernel drops the lock when the process dies, however it
// dies, so a restarted bot can take over a dead process's claims at once
// instead of waiting for their leases to run out.
//
// A lock is only worth something while the owner's path names the file it
// is held on: everyone else finds the owner by that path. Creating a file
// and locking it are two steps, and another process's Open may sweep the
// directory in between, lock the new file, find it free and remove it. So:
//
//   - Only a holder of a file's lock removes it (the owner on Close, a
//     sweep once it has the lock), and only after checking that the path
//     still names the file it locked (same device and inode). While one
//     process holds that lock, nobody else can remove the path, so the
//     check stays true until its own remove.
//   - The owner, once it has the lock, checks the same thing. If a sweep
//     removed the file before the lock was taken, or holds it right now,
//     the owner starts again with a new file; it has no claims yet, so
//     being thought dead meanwhile costs nothing. When lockOwner returns,
//     the path names the locked file and, by the first rule, keeps naming
//     it until Close.

func ownersDir(dbPath string) string { return dbPath + ".owners" }

// lockPatience bounds how long lockOwner keeps starting again. A sweep
// holds another owner's lock for microseconds, and each other process's
// Open sweeps once, so a few rounds are all it ever takes.
const lockPatience = 5 * time.Second

// errLockRaced means a sweep took or removed the owner's new file before
// the owner had it locked under its name.
var errLockRaced = errors.New("lock file taken by a sweep")

// lockOwner creates and exclusively locks the owner's file, then sweeps
// the files that dead owners left; the returned file holds the lock until
// closed.
func lockOwner(dbPath, owner string) (*os.File, error) {
	dir := ownersDir(dbPath)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("storage: owner lock: %w", err)
	}
	name := filepath.Join(dir, owner+".lock")
	deadline := time.Now().Add(lockPatience)
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		f, err := tryLock(name)
		if err == nil {
			sweepOwners(dbPath, owner)
			return f, nil
		}
		if !errors.Is(err, errLockRaced) || time.Now().After(deadline) {
			return nil, fmt.Errorf("storage: owner lock %s: %w", owner, err)
		}
		time.Sleep(wait)
	}
}

// tryLock opens (creating if needed) and locks name. It returns
// errLockRaced if the lock is held by someone else or no longer on the
// file that name names.
func tryLock(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	hook("owner opened", name)
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %w", errLockRaced, err)
		}
		return nil, err
	}
	if !names(name, f) {
		f.Close()
		return nil, errLockRaced
	}
	return f, nil
}

// names reports whether the path name still names the open file f.
func names(name string, f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	ni, err := os.Stat(name)
	return err == nil && os.SameFile(fi, ni)
}

// sweepOwners removes the files that killed processes left beside the
// database, except keep's: a live owner's lock keeps its own file.
func sweepOwners(dbPath, keep string) {
	dir := ownersDir(dbPath)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if other, ok := strings.CutSuffix(e.Name(), ".lock"); ok && other != keep {
			removeIfDead(filepath.Join(dir, e.Name()))
		}
	}
}

// removeIfDead removes the lock file name if no process holds its lock.
func removeIfDead(name string) {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer f.Close()
	hook("sweep opened", name)
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return
	}
	hook("sweep locked", name)
	// The file locked may be one another sweep removed after it was opened
	// here, and name a live owner's new file since.
	if names(name, f) {
		os.Remove(name)
	}
}

// releaseOwner unlocks and removes the owner's file.
func releaseOwner(dbPath string, f *os.File) {
	if f == nil {
		return
	}
	os.Remove(f.Name())
	f.Close()
}

// ownerAlive reports whether a process holds owner's lock. An owner with no
// lock file is not alive, nor is one whose lock can be taken. It changes
// nothing: a lock it takes to find out is released on return.
func ownerAlive(dbPath, owner string) bool {
	name := filepath.Join(ownersDir(dbPath), owner+".lock")
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err != nil {
		return true // cannot tell: trust the lease
	}
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil
}

// testHook, nil outside tests, is called at the named points of the
// windows above so that a test can put another process's steps there.
var testHook func(point, name string)

func hook(point, name string) {
	if testHook != nil {
		testHook(point, name)
	}
}

// livenessKnown says whether ownerAlive can tell a live owner from a dead
// one; without it, claims are held for their leases.
const livenessKnown = true
