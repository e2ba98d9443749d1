package e2e

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// TestReminderFollowsItsMeeting runs the bot binary through a meeting
// moved after its reminder and one cancelled after its reminder: the first
// reminder is edited to say where the meeting moved and a second reminder
// comes for the new time; the other is edited to say it was cancelled.
// The edits are counted on /metrics, recorded in the ledger, and reported
// by bot audit.
func TestReminderFollowsItsMeeting(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.env("REMINDER_OFFSETS=5s")
	p := start(t, w.dir, env)
	addr := p.ready()

	begins := at(14 * time.Second)
	w.meeting(t, "review", "Design review", begins)
	w.meeting(t, "retro", "Retro", begins)
	review := w.waitMessage(t, "Design review", 30*time.Second)
	retro := w.waitMessage(t, "Retro", 30*time.Second)
	movedTo := at(26 * time.Second)
	w.meeting(t, "review", "Design review", movedTo)
	if err := w.cal.Delete(alice, "retro"); err != nil {
		t.Fatal(err)
	}
	if now := time.Now(); !now.Before(begins.Add(-3 * time.Second)) {
		t.Fatalf("the meetings changed at %v, too near their start %v for the test to tell", now, begins)
	}

	// Both messages are edited in place before the meetings would have
	// started.
	var edited map[string]slacktest.Message
	eventually(t, 10*time.Second, "both reminders edited", func() bool {
		edited = map[string]slacktest.Message{}
		for _, m := range w.slack.Messages() {
			if m.TS == review.TS || m.TS == retro.TS {
				if !m.Edited.IsZero() {
					edited[m.TS] = m
				}
			}
		}
		return len(edited) == 2
	})
	for ts, m := range edited {
		if !m.Edited.Before(begins) {
			t.Errorf("message %s edited at %v, want before the meeting's start %v", ts, m.Edited, begins)
		}
	}
	moved, cancelled := edited[review.TS], edited[retro.TS]
	for _, want := range []string{"*Design review* ~starts in 5 seconds~", "~<!date^", "*Moved to <!date^", "a new reminder will follow"} {
		if !strings.Contains(blockText(t, moved), want) {
			t.Errorf("moved meeting's reminder reads %q, want it to contain %q", blockText(t, moved), want)
		}
	}
	if !strings.HasPrefix(moved.Text, "Design review: Moved to <!date^") {
		t.Errorf("moved meeting's reminder text = %q, want it to say where it moved", moved.Text)
	}
	for _, want := range []string{"*Retro* ~starts in 5 seconds~", "*Cancelled*"} {
		if !strings.Contains(blockText(t, cancelled), want) {
			t.Errorf("cancelled meeting's reminder reads %q, want it to contain %q", blockText(t, cancelled), want)
		}
	}

	// The moved meeting gets its own reminder at its new time.
	var second slacktest.Message
	eventually(t, 30*time.Second, "a second reminder of Design review", func() bool {
		for _, m := range w.messages("Design review") {
			if m.TS != review.TS {
				second = m
				return true
			}
		}
		return false
	})
	if trigger := movedTo.Add(-5 * time.Second); second.Posted.Before(trigger) || !second.Posted.Before(movedTo) {
		t.Errorf("second reminder posted at %v, want in [%v, %v)", second.Posted, trigger, movedTo)
	}
	sleepUntil(movedTo.Add(2 * time.Second))
	if n := len(w.messages("Design review")); n != 2 {
		t.Errorf("messages of Design review = %d, want the edited one and the new one", n)
	}
	if n := len(w.messages("Retro")); n != 1 {
		t.Errorf("messages of Retro = %d, want the edited one", n)
	}
	if n := len(w.slack.CallsTo("chat.update")); n != 2 {
		t.Errorf("chat.update calls = %d, want 2: one edit each, never repeated", n)
	}

	_, metrics := httpGet("http://" + addr + "/metrics")
	for _, want := range []string{
		`meetingbot_reminder_edits_total{kind="moved"} 1`,
		`meetingbot_reminder_edits_total{kind="cancelled"} 1`,
		`meetingbot_reminder_edits_total{kind="restored"} 0`,
		`meetingbot_slack_calls_total{call="chat.update",class="ok"} 2`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("GET /metrics lacks %q", want)
		}
	}

	// bot audit, beside the running bot, reports both as superseded and
	// edited.
	var report struct {
		Subscriptions []struct {
			Superseded []struct {
				EventID string `json:"event_id"`
				Message string `json:"message"`
			} `json:"superseded"`
		} `json:"subscriptions"`
	}
	auditReport(t, w.dir, env, &report)
	if len(report.Subscriptions) != 1 {
		t.Fatalf("bot audit --json: %d subscriptions, want 1: %+v", len(report.Subscriptions), report)
	}
	got := map[string]string{}
	for _, it := range report.Subscriptions[0].Superseded {
		got[it.EventID] = it.Message
	}
	if got["review"] != "edited" || got["retro"] != "edited" || len(got) != 2 {
		t.Errorf("bot audit superseded = %v, want review and retro, both edited", got)
	}

	p.signal(syscall.SIGTERM)
	if code, _ := p.wait(15 * time.Second); code != 0 {
		t.Errorf("bot exit status = %d, want 0", code)
	}
	if line := logLine(p.out.String(), `"level":"ERROR"`); line != "" {
		t.Errorf("the bot logged an error: %s", line)
	}
	if n := strings.Count(p.out.String(), `"msg":"reminder edited: its meeting changed"`); n != 2 {
		t.Errorf("the bot logged %d edits, want 2", n)
	}
	entries := ledger(t, env["DATABASE_PATH"], alice)
	if e := entries["retro"]; e.Edit.Kind != meetingbot.EditCancelled || e.Edit.Count != 1 {
		t.Errorf("ledger entry of Retro: edit %+v, want cancelled once", e.Edit)
	}
}

// blockText returns the texts of a message's blocks, one per line.
func blockText(t *testing.T, m slacktest.Message) string {
	t.Helper()
	var blocks []struct {
		Text struct {
			Text string `json:"text"`
		} `json:"text"`
	}
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
		t.Fatalf("blocks of %s: %v", m.TS, err)
	}
	var lines []string
	for _, b := range blocks {
		lines = append(lines, b.Text.Text)
	}
	return strings.Join(lines, "\n")
}
