//go:build !unix

package sqlite

import "os"

// Without flock(2), liveness is unknown and claims wait for their leases.

func lockOwner(dbPath, owner string) (*os.File, error) { return nil, nil }
func releaseOwner(dbPath string, f *os.File)           {}
func ownerAlive(dbPath, owner string) bool             { return false }

// livenessKnown says whether ownerAlive can tell a live owner from a dead
// one; without it, claims are held for their leases.
const livenessKnown = false
