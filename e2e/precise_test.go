package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// End-to-end tests of precise firing: with a 5s tick and a 10s offset, a
// reminder found by the sweeps alone would go out up to 5s late; a timer
// sends it at its trigger. A meeting is seen by a sweep within two ticks
// of its creation (the first round after start-up sweeps at once, the
// next at each subscription's phase), so the meetings here are created
// more than two ticks before their triggers.

// preciseEnv is a production environment with a tick coarser than the
// precision asked for.
func (w *world) preciseEnv(overrides ...string) map[string]string {
	return w.env(append([]string{"REMINDER_OFFSETS=10s", "TICK_INTERVAL=5s"}, overrides...)...)
}

// waitArmed waits until the bot at addr has a reminder armed on a timer,
// and fails the test if that takes until deadline.
func waitArmed(t *testing.T, addr string, deadline time.Time) {
	t.Helper()
	eventually(t, time.Until(deadline), "a timer armed", func() bool {
		_, metrics := httpGet("http://" + addr + "/metrics")
		return strings.Contains(metrics, "\nmeetingbot_timers_armed 1\n")
	})
}

func TestReminderGoesOutAtItsTrigger(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := start(t, w.dir, w.preciseEnv())
	p.ready()
	var begins []time.Time
	for i, title := range []string{"First", "Second", "Third"} {
		b := at(26*time.Second + time.Duration(i)*1700*time.Millisecond)
		w.meeting(t, "m"+title, title, b)
		begins = append(begins, b)
	}
	for i, title := range []string{"First", "Second", "Third"} {
		m := w.waitMessage(t, title, 40*time.Second)
		trigger := begins[i].Add(-10 * time.Second)
		if late := m.Posted.Sub(trigger); late < 0 || late > time.Second {
			t.Errorf("reminder of %s posted %v after its trigger, want within 1s", title, late)
		}
	}
}

// A meeting changed 3 seconds before its trigger, after the sweep that
// planned it: cancelled, it gets nothing; moved later, nothing at the old
// time and one reminder at the new; moved earlier past its trigger, one
// late reminder before it begins.
func TestMeetingChangedJustBeforeItsTrigger(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := start(t, w.dir, w.preciseEnv())
	p.ready()
	begins := at(25 * time.Second)
	trigger := begins.Add(-10 * time.Second)
	w.meeting(t, "cancelled", "Cancelled", begins)
	w.meeting(t, "later", "Moved later", begins)
	w.meeting(t, "earlier", "Moved earlier", begins)
	sleepUntil(trigger.Add(-3 * time.Second))

	if err := w.cal.Delete(alice, "cancelled"); err != nil {
		t.Fatal(err)
	}
	newLater := begins.Add(20 * time.Second)
	w.meeting(t, "later", "Moved later", newLater)
	newEarlier := trigger.Add(5 * time.Second) // its new trigger has passed
	w.meeting(t, "earlier", "Moved earlier", newEarlier)

	m := w.waitMessage(t, "Moved earlier", 10*time.Second)
	if !m.Posted.Before(newEarlier) {
		t.Errorf("late reminder of the meeting moved earlier posted at %v, after its new start %v", m.Posted, newEarlier)
	}
	m = w.waitMessage(t, "Moved later", 40*time.Second)
	if late := m.Posted.Sub(newLater.Add(-10 * time.Second)); late < 0 || late > time.Second {
		t.Errorf("reminder of the meeting moved later posted %v after its new trigger, want within 1s", late)
	}
	sleepUntil(newLater.Add(time.Second))
	for title, want := range map[string]int{"Cancelled": 0, "Moved later": 1, "Moved earlier": 1} {
		if got := len(w.messages(title)); got != want {
			t.Errorf("reminders of %q = %d, want %d", title, got, want)
		}
	}
}

// Killed with a timer armed, the bot loses only the timer: restarted after
// the trigger, it sends the reminder once, late, before the meeting.
func TestKilledWithTimersArmed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.preciseEnv()
	p1 := start(t, w.dir, env)
	addr := p1.ready()
	begins := at(25 * time.Second)
	w.meeting(t, "armed", "Armed", begins)
	waitArmed(t, addr, begins.Add(-11*time.Second))
	p1.signal(syscall.SIGKILL)
	p1.wait(10 * time.Second)

	sleepUntil(begins.Add(-8 * time.Second)) // past the trigger
	p2 := start(t, w.dir, env)
	p2.ready()
	m := w.waitMessage(t, "Armed", 10*time.Second)
	if trigger := begins.Add(-10 * time.Second); m.Posted.Before(trigger) || !m.Posted.Before(begins) {
		t.Errorf("reminder posted at %v, want in [%v, %v)", m.Posted, trigger, begins)
	}
	sleepUntil(begins.Add(time.Second))
	if got := len(w.messages("Armed")); got != 1 {
		t.Errorf("reminders = %d, want 1", got)
	}
}

// Stopped with a timer armed, the bot exits at once and sends nothing
// after the signal.
func TestSIGTERMWithTimersArmed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := start(t, w.dir, w.preciseEnv())
	addr := p.ready()
	begins := at(25 * time.Second)
	w.meeting(t, "armed", "Armed", begins)
	waitArmed(t, addr, begins.Add(-11*time.Second))
	p.signal(syscall.SIGTERM)
	if code, took := p.wait(15 * time.Second); code != 0 || took > 10*time.Second {
		t.Errorf("after SIGTERM: exit %d after %v, want 0 within 10s", code, took)
	}
	sleepUntil(begins.Add(-9 * time.Second)) // past the trigger
	if got := len(w.messages("Armed")); got != 0 {
		t.Errorf("reminders sent after the signal = %d, want 0", got)
	}
}

// Two processes on one database both plan timers for the same reminders:
// each goes out once, at its trigger.
func TestTwoProcessesWithTimersSendOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.preciseEnv("CALENDARS=" + alice + "," + teamID)
	p1 := start(t, w.dir, env)
	p2 := start(t, w.dir, env)
	p1.ready()
	p2.ready()
	var last time.Time
	titles := map[string]time.Time{}
	for i, cal := range []string{alice, team, alice, team} {
		title := "Shared " + string(rune('A'+i))
		last = at(26*time.Second + time.Duration(i)*1300*time.Millisecond)
		w.meetingIn(t, cal, "s"+string(rune('a'+i)), title, last)
		titles[title] = last
	}
	sleepUntil(last.Add(-9 * time.Second))
	for title, begins := range titles {
		ms := w.messages(title)
		if len(ms) != 1 {
			t.Errorf("reminders of %s = %d, want 1", title, len(ms))
			continue
		}
		if late := ms[0].Posted.Sub(begins.Add(-10 * time.Second)); late < 0 || late > time.Second {
			t.Errorf("reminder of %s posted %v after its trigger, want within 1s", title, late)
		}
	}
}

// A flood of invitations to one person, 45 meetings at one instant with
// offsets 40s and 5s, goes out as one digest message per offset, on time,
// and the eng channel's reminder of its own meeting at the same instant is
// on time too (issue: one user must not silence everyone).
func TestFloodOfInvitationsSilencesNoOne(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.env("CALENDARS="+alice+","+teamID, "REMINDER_OFFSETS=40s,5s", "TICK_INTERVAL=1s")
	p := start(t, w.dir, env)
	p.ready()
	begins := at(50 * time.Second)
	for i := range 45 {
		w.meeting(t, fmt.Sprintf("invite%02d", i), fmt.Sprintf("Invitation %02d", i), begins)
	}
	w.meetingIn(t, team, "standup", "Eng standup", begins)
	sleepUntil(begins.Add(time.Second))

	eng := w.messages("Eng standup")
	if len(eng) != 2 {
		t.Fatalf("eng reminders = %d, want 2 (40s and 5s)", len(eng))
	}
	for i, trigger := range []time.Time{begins.Add(-40 * time.Second), begins.Add(-5 * time.Second)} {
		if late := eng[i].Posted.Sub(trigger); late < 0 || late > time.Second {
			t.Errorf("eng reminder %d posted %v after its trigger, want within 1s", i, late)
		}
	}
	digests := w.messages("45 meetings")
	if len(digests) != 2 {
		t.Fatalf("digests to alice = %d, want 2 (one per offset); messages: %d", len(digests), len(w.slack.Messages()))
	}
	for i, trigger := range []time.Time{begins.Add(-40 * time.Second), begins.Add(-5 * time.Second)} {
		if late := digests[i].Posted.Sub(trigger); late < 0 || late > time.Second {
			t.Errorf("digest %d posted %v after its trigger, want within 1s", i, late)
		}
	}
	if n := len(w.slack.Messages()); n != 4 {
		t.Errorf("messages = %d, want 4: two digests and two eng reminders", n)
	}
}
