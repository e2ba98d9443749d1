//go:build race

package snooze_test

const raceEnabled = true
