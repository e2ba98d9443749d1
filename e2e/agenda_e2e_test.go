package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// TestAgendaForTheNextMinuteArrivesOnce: Bob sets /meetingbot agenda for
// the next minute in his Slack zone; the built bot DMs him the day's
// meetings at that minute, within a couple of seconds, and only once.
func TestAgendaForTheNextMinuteArrivesOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.selfServiceEnv()
	// A zone where the next minute is not near midnight, so that the
	// meeting below is on the same local day.
	var loc *time.Location
	for _, name := range []string{"Asia/Seoul", "America/New_York"} {
		l, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		if h := time.Now().In(l).Hour(); h >= 1 && h <= 21 {
			loc = l
			break
		}
	}
	w.slack.SetProfile(bobID, slacktest.Profile{TZ: loc.String()})
	p := start(t, w.dir, env)
	addr := p.ready()

	due := time.Now().In(loc).Truncate(time.Minute).Add(time.Minute)
	if time.Until(due) < 8*time.Second {
		due = due.Add(time.Minute) // time to type the command first
	}
	w.meetingIn(t, bob, "review", "Design review", due.Add(90*time.Minute))
	hhmm := due.Format("15:04")
	if reply := w.slash(t, addr, bobID, bobDM, "agenda "+hhmm); !strings.HasPrefix(reply, "Daily agenda at "+hhmm) {
		t.Fatalf("/meetingbot agenda %s = %q, want Daily agenda at %s", hhmm, reply, hhmm)
	}
	var got []slacktest.Message
	eventually(t, time.Until(due)+15*time.Second, "the agenda", func() bool {
		got = agendaMessages(w)
		return len(got) > 0
	})
	m := got[0]
	if m.Channel != bobDM || m.Posted.Before(due) || m.Posted.After(due.Add(2*time.Second)) {
		t.Errorf("agenda in %s at %v, want in %s within 2s of %v", m.Channel, m.Posted, bobDM, due)
	}
	if !strings.Contains(string(m.Blocks), "Design review") {
		t.Errorf("agenda blocks = %s, want the design review", m.Blocks)
	}
	if key, want := m.Metadata.EventPayload["key"], meetingbot.AgendaKey(bobID, due.Format(time.DateOnly)); key != want {
		t.Errorf("agenda key = %v, want %s", key, want)
	}
	time.Sleep(3 * time.Second) // three more passes
	if n := len(agendaMessages(w)); n != 1 {
		t.Errorf("agendas = %d, want 1", n)
	}
}

// agendaMessages returns the agenda DMs posted.
func agendaMessages(w *world) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range w.slack.Messages() {
		if m.Metadata != nil && m.Metadata.EventType == notify.AgendaEventType {
			out = append(out, m)
		}
	}
	return out
}
