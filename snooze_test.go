package meetingbot

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestSnoozeKeyNamesTheReminderItSnoozes(t *testing.T) {
	fire := time.Date(2026, 11, 30, 9, 0, 0, 0, time.FixedZone("CET", 3600))
	rk := Key("abc_20261130T080000Z", 10*time.Minute, fire)
	key := SnoozeKey("U0BOB00001", rk, fire)
	if want := "snooze:U0BOB00001:abc_20261130T080000Z:10m:2026-11-30T08:00:00Z:2026-11-30T08:00:00Z"; key != want {
		t.Errorf("SnoozeKey = %q, want %q", key, want)
	}
	for _, tt := range []struct{ key, want string }{
		{key, rk},
		{rk, rk},
		{SnoozeKey("U1", key, fire.Add(time.Minute)), key},
		{"snooze:U1", "snooze:U1"},
	} {
		if got := SnoozedReminder(tt.key); got != tt.want {
			t.Errorf("SnoozedReminder(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
	if !IsSnooze(SnoozeSubscription("U1")) || IsSnooze("alice@example.com") || IsSnooze(AgendaSubscription("U1")) {
		t.Error("IsSnooze tells snoozes' pseudo-subscriptions from others wrongly")
	}
}

func TestSnoozeValueFitsABUttonAndReadsBack(t *testing.T) {
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	m := Meeting{ID: "ev1", Title: strings.Repeat("é", 300), Start: start, End: start.Add(30 * time.Minute), JoinURL: "https://meet.google.com/abc"}
	v := SnoozeValue("alice", "ev1:10m:x", m)
	got, ok := ParseSnoozeValue(v)
	if !ok {
		t.Fatalf("ParseSnoozeValue(%s) failed", v)
	}
	if n := utf8.RuneCountInString(got.Title); n != maxSnoozeTitle {
		t.Errorf("title of %d characters, want cut to %d", n, maxSnoozeTitle)
	}
	if back := got.Meeting(); !back.Start.Equal(start) || !back.End.Equal(m.End) || back.JoinURL != m.JoinURL || back.ID != "ev1" {
		t.Errorf("Meeting() = %+v, want %+v as shown", back, m)
	}
	m.JoinURL = "https://zoom.us/j/" + strings.Repeat("1", 2500)
	long := SnoozeValue("alice", "ev1:10m:x", m)
	if utf8.RuneCountInString(long) > MaxButtonValue {
		t.Errorf("value of %d characters, over Slack's %d", utf8.RuneCountInString(long), MaxButtonValue)
	}
	if got, _ := ParseSnoozeValue(long); got.JoinURL != "" || got.Title == "" {
		t.Errorf("a long join link: kept %q and title %q, want the link left out first", got.JoinURL, got.Title)
	}
	if _, ok := ParseSnoozeValue(`{"s":"alice"}`); ok {
		t.Error("a value without its reminder parsed")
	}
	if SnoozeValue(strings.Repeat("s", 2100), "k", m) != "" {
		t.Error("a value that cannot fit was returned")
	}
}
