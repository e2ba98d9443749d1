//go:build race

package scheduler_test

// raceEnabled trims the randomized test: the race detector slows the pure-Go
// SQLite by an order of magnitude. CI also runs the full count without it.
const raceEnabled = true
