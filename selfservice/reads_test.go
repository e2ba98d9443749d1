package selfservice_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Home tab does not read Google each time it is opened: 30 opens in
// 30 seconds read Alice's calendar once, and a minute later once more.
func TestHomeOpensReadTheCalendarOnceAMinute(t *testing.T) {
	e := newEnv(t)
	for i := range 30 {
		e.openHome(alice)
		assert.Contains(t, e.home(alice, i+1), "I can read alice@example.com", "Home tab opened %d times", i+1)
		e.clock.Advance(time.Second)
	}
	assert.Equal(t, 1, e.cals.readCount(), "calendar reads for 30 Home opens in 30 seconds")

	e.clock.Advance(30 * time.Second)
	e.openHome(alice)
	e.home(alice, 31)
	assert.Equal(t, 2, e.cals.readCount(), "calendar reads once the last one is a minute old")

	// "/meetingbot on" reads afresh, what it says of the next reminder
	// being its answer; the Home tab it leaves reads nothing more.
	require.Contains(t, e.command(alice, eng, "on"), "On.")
	e.openHome(alice)
	e.home(alice, 32)
	assert.Equal(t, 3, e.cals.readCount(), "calendar reads after /meetingbot on and a Home open")
}

// "Check again" reads the calendar afresh, but one person causes at most
// three reads a minute, however often they click: the rest are answered
// from the last reading. Another person's reads are theirs. So does
// "/meetingbot on", within the same reads.
func TestCheckAgainIsLimitedPerPerson(t *testing.T) {
	e := newEnv(t)
	e.openHome(alice)
	e.home(alice, 1)
	for i := range 5 {
		e.clock.Advance(time.Second)
		e.interact(alice, false, map[string]any{"action_id": "home_refresh", "type": "button", "value": "check"})
		assert.Contains(t, e.home(alice, i+2), "I can read alice@example.com", "Check again %d", i+1)
	}
	assert.Equal(t, 3, e.cals.readCount(), "calendar reads for a Home open and 5 clicks of Check again within a minute")

	e.cals.set("bob@example.com", nil, weekly)
	e.openHome(bob)
	e.home(bob, 1)
	assert.Equal(t, 4, e.cals.readCount(), "Bob's Home tab reads his calendar")

	e.clock.Advance(time.Minute)
	e.interact(alice, false, map[string]any{"action_id": "home_refresh", "type": "button", "value": "check"})
	e.home(alice, 7)
	assert.Equal(t, 5, e.cals.readCount(), "Check again a minute later reads again")
	for range 5 {
		e.clock.Advance(time.Second)
		require.Contains(t, e.command(alice, eng, "on"), "Next reminder: *Weekly sync*")
	}
	assert.Equal(t, 7, e.cals.readCount(), "calendar reads for 5 /meetingbot on within the minute: 2 left of Alice's 3")
}

// A person over their reads with no reading to fall back on is told to
// wait, and nothing is read.
func TestTooManyReadsWithoutAReadingSaysToWait(t *testing.T) {
	e := newEnv(t)
	e.cals.set("alice@example.com", noAccess{"googleapi: Error 404: Not Found, notFound"})
	for range 3 {
		e.clock.Advance(6 * time.Second) // past the few seconds a failure is kept
		assert.Contains(t, e.command(alice, eng, "on"), "I can't read the calendar alice@example.com")
	}
	reads := e.cals.readCount()
	e.clock.Advance(6 * time.Second)
	reply := e.command(alice, eng, "on")
	assert.Contains(t, reply, "moments ago", "a fourth /meetingbot on within the minute")
	assert.Equal(t, reads, e.cals.readCount(), "calendar reads for it")
	assert.Empty(t, e.subs())
	assert.Equal(t, 3, reads, "calendar reads of three /meetingbot on, 6 seconds apart, failing")
}

// Home tabs opened while the calendar is being read wait for that read
// and share it: one call, every tab showing what it read.
func TestHomeOpensAtOnceShareOneRead(t *testing.T) {
	e := newEnv(t)
	release := e.cals.hold()
	for range 10 {
		e.openHome(alice)
	}
	require.Eventually(t, func() bool { return e.cals.readCount() >= 1 }, 5*time.Second, time.Millisecond, "a read under way")
	release()
	e.home(alice, 10)
	for _, v := range e.slack.HomeViews() {
		assert.Contains(t, texts(v.Blocks), "I can read alice@example.com")
	}
	assert.Equal(t, 1, e.cals.readCount(), "calendar reads of 10 Home opens at once")
}
