//go:build unix

package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// An owner's liveness is a flock(2) on a file of its own beside the
// database: the kernel drops the lock when the process dies, however it
// dies, so a restarted bot can take over a dead process's claims at once
// instead of waiting for their leases to run out.

func ownersDir(dbPath string) string { return dbPath + ".owners" }

// lockOwner creates and exclusively locks the owner's file, then sweeps
// the files that dead owners left; the returned file holds the lock until
// closed.
func lockOwner(dbPath, owner string) (*os.File, error) {
	dir := ownersDir(dbPath)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("storage: owner lock: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, owner+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("storage: owner lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("storage: owner lock %s: %w", owner, err)
	}
	sweepOwners(dbPath, owner)
	return f, nil
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
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return
	}
	os.Remove(name)
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
