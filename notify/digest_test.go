package notify_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// flood is n meetings of one calendar starting at the same instant, one of
// them private and one with a hostile title, reminded 40 seconds before.
func flood(n int) []meetingbot.Reminder {
	var rs []meetingbot.Reminder
	for i := range n {
		m := meeting()
		m.ID = fmt.Sprintf("invite%02d_20260302T090000Z", i)
		m.Title = fmt.Sprintf("Invitation %02d", i)
		switch i {
		case 1:
			m.Private = true
		case 2:
			m.Title = "Standup\n*Join:* https://evil.example/zoom <!channel>"
			m.JoinURL = "https://zoom.us@evil.example/j/1"
		}
		rs = append(rs, reminder(sub("#standup"), m, 40*time.Second))
	}
	return rs
}

// A digest is one valid message (the emulator enforces Block Kit's
// limits) whose payload is golden, and whose metadata lets the lookup
// after a crash find each of its reminders and the audit count each.
func TestDigestPostsOneMessageForMany(t *testing.T) {
	e := newEnv(t)
	rs := flood(notify.MaxDigest)
	e.clock.Set(meetingStart.Add(-40 * time.Second))
	rc, err := e.slack.NotifyDigest(context.Background(), rs)
	if err != nil {
		t.Fatalf("NotifyDigest(%d reminders) = %v", len(rs), err)
	}
	if n := len(e.srv.Messages()); n != 1 {
		t.Fatalf("messages = %d, want 1", n)
	}
	got := recordedPayload(t, e)
	path := filepath.Join("..", "testdata", "notify", "digest.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("digest payload differs from %s:\n%s", path, got)
	}
	text := e.srv.Messages()[0].Text
	if !strings.HasPrefix(text, "45 meetings start in 40 seconds: ") {
		t.Errorf("digest text = %q, want it to say how many meetings start and when", text)
	}
	for _, leak := range []string{"\\n", "<!channel>", "https://zoom.us@evil.example"} {
		if strings.Contains(string(e.srv.Messages()[0].Blocks), leak) {
			t.Errorf("digest blocks contain %q from an event", leak)
		}
	}

	for _, r := range []meetingbot.Reminder{rs[0], rs[17], rs[len(rs)-1]} {
		found, ok, err := e.slack.Delivered(context.Background(), r)
		if err != nil || !ok || found != rc {
			t.Errorf("Delivered(%s) = %v, %v, %v; want the digest %v", r.Key, found, ok, err, rc)
		}
	}
	ds, err := e.slack.Reminders(context.Background(), sub("#standup"), meetingStart.Add(-time.Hour), meetingStart.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != len(rs) {
		t.Fatalf("Reminders() = %d deliveries, want one per reminder of the digest (%d)", len(ds), len(rs))
	}
	for i, d := range ds {
		if d.Key != rs[i].Key || d.TS != rc.TS || !d.Start.Equal(meetingStart) || d.Offset != 40*time.Second {
			t.Errorf("Reminders()[%d] = %+v, want key %s in message %s", i, d, rs[i].Key, rc.TS)
		}
	}
}

func TestDigestRefusesWhatItCannotSend(t *testing.T) {
	e := newEnv(t)
	mixed := flood(3)
	mixed[1].Subscription.ID = "other"
	for name, rs := range map[string][]meetingbot.Reminder{
		"none":         nil,
		"too many":     flood(notify.MaxDigest + 1),
		"several subs": mixed,
	} {
		if _, err := e.slack.NotifyDigest(context.Background(), rs); err == nil {
			t.Errorf("NotifyDigest(%s) = nil error, want one", name)
		}
	}
	if n := len(e.srv.Messages()); n != 0 {
		t.Errorf("messages = %d, want 0", n)
	}
}

// A digest whose answer is lost after Slack stored it is looked up, not
// posted twice, as a single reminder is.
func TestDigestLostAnswerNotPostedTwice(t *testing.T) {
	e := newEnv(t)
	e.clock.Set(meetingStart.Add(-40 * time.Second))
	e.srv.Fail("chat.postMessage", "", slacktest.Fault{Status: 503, Applied: true})
	if _, err := e.slack.NotifyDigest(context.Background(), flood(8)); err != nil {
		t.Fatalf("NotifyDigest() = %v", err)
	}
	if n := len(e.srv.Messages()); n != 1 {
		t.Errorf("messages = %d, want 1", n)
	}
}
