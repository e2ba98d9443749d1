package demo

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
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
		"That was every demo meeting. What the bot did (from its ledger; times are when each reminder was due; \"none\" lines are the meetings without one, as the calendar has them now): 3 reminders sent, 1 of them late, 1 edited since, 1 skipped or failed.",
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

// The meetings without a reminder are said as the calendar has them when
// the demo stops: cancelled, moved before their reminders, or not due yet;
// one reminded at its first time and one the script had not created get
// no line; one moved after its reminder (whose sent line says so) is not
// due yet at its new time.
func TestDemoWithoutReminder(t *testing.T) {
	ctx := context.Background()
	cal := calendartest.NewServer()
	defer cal.Close()
	start := time.Now().Truncate(time.Second)
	d := &demoScript{cal: cal, out: &demoPrinter{w: &bytes.Buffer{}}, start: start}
	if err := d.seed(); err != nil {
		t.Fatal(err)
	}
	// As the script leaves them 60 s in: 1:1 moved, budget cancelled,
	// review moved after its reminder; quick not created yet.
	for _, step := range d.steps {
		if step.at <= 60*time.Second && step.at != demoBobTypesAt && !strings.Contains(step.say, "Quick question") {
			if err := step.do(); err != nil {
				t.Fatal(err)
			}
		}
	}
	now, err := demoCalendar(ctx, cal, d.meetings)
	if err != nil {
		t.Fatalf("demoCalendar = %v", err)
	}
	if _, ok := now["quick"]; ok || now["budget"].Status != "cancelled" {
		t.Fatalf("demoCalendar = quick %v, budget %q; want quick absent and budget cancelled", now["quick"], now["budget"].Status)
	}
	stop := start.Add(60 * time.Second)
	entries := []meetingbot.Entry{
		{EventID: "review", Start: start.Add(80 * time.Second), Offset: time.Minute, Outcome: meetingbot.Sent},
		{EventID: "planning", Start: start.Add(65 * time.Second), Offset: time.Minute, Outcome: meetingbot.Sent},
		{EventID: "retro_1", Start: start.Add(demoRetroAt), Offset: time.Minute, Outcome: meetingbot.Sent},
	}
	p := d.out
	got := withoutReminder(p, entries, d.meetings, now, stop)
	want := []demoOutcome{
		{"Design review <API v2> at " + p.clock(start.Add(demoReviewMovedTo)), "not due yet when the demo stopped: its first reminder is due at " + p.clock(start.Add(demoReviewMovedTo-time.Minute))},
		{"1:1 with Bob at " + p.clock(start.Add(150*time.Second)), "moved to " + p.clock(start.Add(210*time.Second)) + " before its reminders were due: its first reminder for the new time is not due yet, at " + p.clock(start.Add(150*time.Second))},
		{"Budget sync", "cancelled before its reminder time (the calendar has it cancelled)"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("withoutReminder at 60 s = %q, want %q", got, want)
	}
	// Its reminder for the new time sent, the moved 1:1 says so.
	entries = append(entries, meetingbot.Entry{EventID: "one-on-one", Start: start.Add(210 * time.Second), Offset: time.Minute, Outcome: meetingbot.Sent})
	if got := withoutReminder(p, entries, d.meetings, now, start.Add(151*time.Second)); len(got) != 2 || !strings.HasSuffix(got[0].why, ": they went out for the new time only") {
		t.Errorf("withoutReminder at 151 s = %q, want the 1:1 reminded at its new time only, and the budget sync", got)
	}
	// Stopped 4 s in, before any change: no meeting is due yet.
	fresh := calendartest.NewServer()
	defer fresh.Close()
	d = &demoScript{cal: fresh, out: p, start: start}
	if err := d.seed(); err != nil {
		t.Fatal(err)
	}
	if now, err = demoCalendar(ctx, fresh, d.meetings); err != nil {
		t.Fatal(err)
	}
	got = withoutReminder(p, nil, d.meetings, now, start.Add(4*time.Second))
	if len(got) != 5 || got[0].title != "Sprint planning at "+p.clock(start.Add(65*time.Second)) || got[0].why != "not due yet when the demo stopped: its first reminder is due at "+p.clock(start.Add(5*time.Second)) {
		t.Errorf("withoutReminder at 4 s = %q, want the five seeded meetings not due yet, Sprint planning first at +5 s", got)
	}
}
