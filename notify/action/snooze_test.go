package action_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify/action"
)

func TestSnoozeValueFitsABUttonAndReadsBack(t *testing.T) {
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	m := meetingbot.Meeting{ID: "ev1", Title: strings.Repeat("é", 300), Start: start, End: start.Add(30 * time.Minute), JoinURL: "https://meet.google.com/abc"}
	v := action.SnoozeValue("alice", "ev1:10m:x", m)
	got, ok := action.ParseSnooze(v)
	if !ok {
		t.Fatalf("action.ParseSnooze(%s) failed", v)
	}
	if n := utf8.RuneCountInString(got.Title); n != 100 {
		t.Errorf("title of %d characters, want cut to %d", n, 100)
	}
	if back := got.Meeting(); !back.Start.Equal(start) || !back.End.Equal(m.End) || back.JoinURL != m.JoinURL || back.ID != "ev1" {
		t.Errorf("Meeting() = %+v, want %+v as shown", back, m)
	}
	m.JoinURL = "https://zoom.us/j/" + strings.Repeat("1", 2500)
	long := action.SnoozeValue("alice", "ev1:10m:x", m)
	if utf8.RuneCountInString(long) > action.MaxButtonValue {
		t.Errorf("value of %d characters, over Slack's %d", utf8.RuneCountInString(long), action.MaxButtonValue)
	}
	if got, _ := action.ParseSnooze(long); got.JoinURL != "" || got.Title == "" {
		t.Errorf("a long join link: kept %q and title %q, want the link left out first", got.JoinURL, got.Title)
	}
	if _, ok := action.ParseSnooze(`{"s":"alice"}`); ok {
		t.Error("a value without its reminder parsed")
	}
	if action.SnoozeValue(strings.Repeat("s", 2100), "k", m) != "" {
		t.Error("a value that cannot fit was returned")
	}
}
