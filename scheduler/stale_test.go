package scheduler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
)

// A calendar that cannot answer from 08:53 to 09:01 (the mirror answers
// from its reading of 08:52:30): the 5-minute reminder of the 09:00
// meeting, due at 08:55 during the outage, goes out at its trigger, from
// what the bot read before; once the calendar answers nothing is sent
// twice and nothing is recorded as skipped.
func TestReminderDueDuringAnOutageGoesOutFromTheLastReading(t *testing.T) {
	e := newEnv(t, sub("alice", 15*time.Minute, 5*time.Minute))
	e.fakeMirror = true
	e.restart()
	e.meeting(cal, "standup", at("09:00"))
	e.tickEvery(at("08:40"), at("08:52:30"), 30*time.Second)
	e.cal.Down(cal, at("08:52:30"), meetingbot.StaleUnavailable)
	e.tickEvery(at("08:53"), at("09:00:30"), 30*time.Second)
	e.cal.Up(cal)
	e.tickEvery(at("09:01"), at("09:05"), 30*time.Second)

	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 2, "reminders of the 09:00 meeting")
	assert.Equal(t, at("08:45"), got[0].At, "the 15-minute reminder")
	assert.Equal(t, at("08:55"), got[1].At, "the 5-minute reminder, due during the outage, at its trigger")
	for _, row := range e.ledger() {
		assert.Equal(t, meetingbot.Sent, row.Outcome, "ledger: %s", row.Key)
	}
}

// A sweep over a stale reading records nothing it cannot tell: the bot
// restarts at 09:05 while the calendar cannot answer, its reading says
// the 09:00 meeting started, and neither that meeting (moved to 09:30
// meanwhile) nor the one created at 08:50 for 09:02, which the reading
// does not show, is recorded until the calendar answers at 09:10. Then
// the moved meeting is reminded for its new time, and the one that
// started while the bot was down is recorded as skipped because it
// started: the cursor waited for a fresh reading.
func TestStaleSweepRecordsNothingItCannotTell(t *testing.T) {
	e := newEnv(t)
	e.fakeMirror = true
	e.restart()
	e.meeting(cal, "review", at("09:00"))
	e.tickEvery(at("08:40"), at("08:45"), 30*time.Second)
	e.restart()
	e.sched.Stop() // down from 08:45
	e.cal.Down(cal, at("08:45"), meetingbot.StaleUnavailable)
	e.meeting(cal, "review", at("09:30")) // moved
	e.meeting(cal, "quick", at("09:02"))  // created
	e.restart()
	e.tickEvery(at("09:05"), at("09:09:30"), 30*time.Second)
	assert.Empty(t, e.ledger(), "ledger after sweeps over a stale reading")
	assert.Empty(t, e.fakeSlack.Deliveries(), "reminders of meetings that started, by the stale reading")
	e.cal.Up(cal)
	e.tickEvery(at("09:10"), at("09:21"), 30*time.Second)

	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 1)
	assert.Equal(t, "review", got[0].Meeting.ID)
	assert.Equal(t, at("09:20"), got[0].At, "the moved meeting's reminder, for its new time")
	byEvent := map[string]meetingbot.Entry{}
	for _, row := range e.ledger() {
		byEvent[row.EventID+" "+row.Start.Format("15:04")] = row
	}
	assert.Len(t, byEvent, 2, "ledger rows: %v", byEvent)
	if r := byEvent["quick 09:02"]; assert.Equal(t, meetingbot.Skipped, r.Outcome, "the meeting created during the outage") {
		assert.Equal(t, meetingbot.ReasonStarted, r.Code)
	}
	assert.Equal(t, meetingbot.Sent, byEvent["review 09:30"].Outcome)
}
