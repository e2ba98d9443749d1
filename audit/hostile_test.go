package audit_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/meetingbot/meetingbot/audit"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// A meeting's title is written by whoever sent the invitation; printed raw,
// it could move the cursor, clear the screen, plant a link or reverse the
// rest of the line in the operator's terminal. The table shows it as text.
func TestWriteTableShowsTitlesAsText(t *testing.T) {
	e := newEnv(t)
	title := "Evil \x1b]8;;https://evil.example\x07click\x1b]8;;\x07 \x1b[2J\x1b[1;1H\u009b31m\u202etxt.exe\u202c\x00\r\nnext"
	m := meeting("evthostile", title, at(9, 0, 0))
	e.cal.put(team.CalendarID, calendartest.NewEvent(m.ID, m.Title, m.Start, m.End))
	r, err := audit.Reconcile(context.Background(), e.input(at(8, 0, 0), at(10, 0, 0), at(10, 0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, c := range out {
		if c != '\n' && (unicode.IsControl(c) || unicode.Is(unicode.Cf, c)) {
			t.Fatalf("WriteTable() output has %U:\n%q", c, out)
		}
	}
	if !strings.Contains(out, "Evil ]8;;https://evil.exampleclick]8;; [2J[1;1H31mtxt.exe next (evthostile)") {
		t.Errorf("WriteTable() = \n%s\nwant the title's printable text on the MISSING line", out)
	}
}

// Another app can post a message with the bot's metadata type and a key of
// its choosing; only the bot's own messages count as delivered, as crash
// recovery already has it.
func TestOtherAppsRemindersNotCounted(t *testing.T) {
	e := newEnv(t)
	m := meeting("evtforged", "Standup", at(9, 0, 0))
	e.cal.put(team.CalendarID, calendartest.NewEvent(m.ID, m.Title, m.Start, m.End))
	r := reminder(team, m, 10*time.Minute)
	e.clock.Set(at(8, 50, 0))
	e.srv.AddMessage(slacktest.Message{Channel: "C0STANDUP1", Text: "Standup starts in 10 minutes",
		User: "U0OTHER001", BotID: "B0OTHER001",
		Metadata: &slacktest.Metadata{EventType: notify.EventType, EventPayload: map[string]any{
			"key": r.Key, "subscription": team.ID, "event_id": m.ID, "start": "2026-03-02T09:00:00Z", "offset": "10m",
		}}})

	rep, err := audit.Reconcile(context.Background(), e.input(at(8, 0, 0), at(10, 0, 0), at(10, 0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Subscriptions[0]
	if _, ok := find(s.Missing, m.ID); !ok || len(s.Delivered) != 0 || len(s.Unexpected) != 0 {
		t.Errorf("Reconcile() = delivered %+v, missing %+v, unexpected %+v; want the forged reminder ignored and %s missing", s.Delivered, s.Missing, s.Unexpected, m.ID)
	}
}
