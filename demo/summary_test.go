package demo

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// The summary says what was sent (late, edited), skipped and why, and the
// meetings the script's changes left without a reminder.
func TestDemoSummary(t *testing.T) {
	var b bytes.Buffer
	p := &demoPrinter{w: &b}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	entries := []meetingbot.Entry{
		{EventID: "planning", Subscription: demoTeam + "=" + demoChannel, Offset: time.Minute, TriggerAt: at, Outcome: meetingbot.Sent, Channel: demoChannelID},
		{EventID: "quick", Subscription: demoAlice, Offset: time.Minute, TriggerAt: at.Add(time.Minute), Outcome: meetingbot.Sent, Channel: "D0ALICE001", Late: true},
		{EventID: "review", Subscription: demoAlice, Offset: 0, TriggerAt: at.Add(2 * time.Minute), Outcome: meetingbot.Sent, Channel: "D0ALICE001",
			Edit: meetingbot.Edit{Kind: meetingbot.EditCancelled, Count: 1}},
		{EventID: "retro_1", Subscription: "slack:bob", Offset: time.Minute, TriggerAt: at.Add(3 * time.Minute), Outcome: meetingbot.Skipped, Reason: "the meeting had started"},
	}
	titles := map[string]string{"planning": "Sprint planning", "quick": "Quick question", "review": "Design review", "retro_1": "Team retro"}
	p.summary(entries, titles, []demoOutcome{{"Budget sync", "cancelled before its reminder time"}}, false)
	out := b.String()
	for _, want := range []string{
		"That was every demo meeting. What the bot did (from its ledger; times are when each reminder was due): 3 reminders sent, 1 of them late, 1 edited since, 1 skipped or failed.",
		"  sent     " + p.clock(at) + "  #engineering   Sprint planning, 1m before\n",
		"DM to @alice   Quick question, 1m before (late: found due after its reminder time)\n",
		"Design review, at the start; edited since: cancelled\n",
		"  skipped  " + p.clock(at.Add(3*time.Minute)) + "  DM             Team retro, 1m before: the meeting had started\n",
		"  none     Budget sync: cancelled before its reminder time\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

// The script stops the bot once the last meeting's reminder is past, and
// says it finished.
func TestDemoScriptFinishes(t *testing.T) {
	d := &demoScript{out: &demoPrinter{w: &bytes.Buffer{}}, start: time.Now().Add(-time.Minute), until: 50 * time.Second}
	stopped := make(chan struct{})
	d.finish = func() { close(stopped) }
	done := make(chan struct{})
	go func() { d.play(context.Background()); close(done) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the script did not stop the bot after its last meeting")
	}
	<-done
	if !d.finished.Load() {
		t.Error("finished = false after the script stopped the bot")
	}
}

// demoLedger reads back what a stopped bot recorded.
func TestDemoLedger(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "reminders.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	e := meetingbot.Entry{Subscription: demoAlice, Key: "quick:1m:x", EventID: "quick", Offset: time.Minute, Start: now.Add(time.Minute), TriggerAt: now}
	if _, _, err := s.Claim(ctx, e, now, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	e.Outcome, e.Channel, e.MessageTS = meetingbot.Sent, "D0ALICE001", "1.000001"
	if err := s.Record(ctx, e, now); err != nil {
		t.Fatal(err)
	}
	s.Close()
	got, err := demoLedger(ctx, path, now.Add(-time.Minute), now.Add(time.Minute))
	if err != nil || len(got) != 1 || got[0].EventID != "quick" || got[0].Outcome != meetingbot.Sent {
		t.Errorf("demoLedger = %+v, %v; want the one sent entry", got, err)
	}
}
