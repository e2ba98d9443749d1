package monitor_test

import (
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
)

// TestTimerMetrics: the timers pending, and those ended by kind and
// outcome, a DM a minute after its instant counted late.
func TestTimerMetrics(t *testing.T) {
	m, _, srv := start(t)
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	snooze := func(state meetingbot.TimerState, code meetingbot.ReasonCode, after time.Duration) meetingbot.Timer {
		return meetingbot.Timer{Kind: meetingbot.TimerKindSnooze, State: state, Code: code, FireAt: at, DoneAt: at.Add(after)}
	}
	m.TimerFired(snooze(meetingbot.TimerDone, meetingbot.ReasonSent, time.Second))
	m.TimerFired(snooze(meetingbot.TimerDone, meetingbot.ReasonSent, time.Minute))
	m.TimerFired(snooze(meetingbot.TimerMoved, meetingbot.ReasonMeetingMoved, 0))
	m.TimerFired(snooze(meetingbot.TimerDone, meetingbot.ReasonMeetingCancelled, 0))
	m.TimerFired(snooze(meetingbot.TimerDone, meetingbot.ReasonMeetingCancelled, 0))
	m.TimersPending(3)
	_, body := get(t, srv.URL+"/metrics")
	for _, want := range []string{
		"meetingbot_timers_pending 3",
		`meetingbot_timers_fired_total{kind="snooze",outcome="sent"} 1`,
		`meetingbot_timers_fired_total{kind="snooze",outcome="late"} 1`,
		`meetingbot_timers_fired_total{kind="snooze",outcome="moved"} 1`,
		`meetingbot_timers_fired_total{kind="snooze",outcome="meeting_cancelled"} 2`,
		`meetingbot_timers_fired_total{kind="snooze",outcome="meeting_ended"} 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
