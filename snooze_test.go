package meetingbot

import (
	"testing"
	"time"
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
}

// TestSnoozeGroupIsOnePerPersonMeetingAndMode: a person's snoozes of one
// meeting in one mode share a group (one pending timer, one DM), whichever
// of its reminders was clicked and wherever the meeting moved.
func TestSnoozeGroupIsOnePerPersonMeetingAndMode(t *testing.T) {
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	m := Meeting{ID: "ev1", Start: start, End: start.Add(30 * time.Minute)}
	moved := m
	moved.Start, moved.End = start.Add(-30*time.Minute), start
	base := Snooze{User: "U1", Mode: SnoozeAtStart, Reminder: Key("ev1", 10*time.Minute, start), Subscription: "alice", Calendar: "alice", Meeting: m}
	group := base.Timer(start).Group
	for _, tt := range []struct {
		name string
		s    func(Snooze) Snooze
		same bool
	}{
		{"the 1-minute reminder", func(s Snooze) Snooze { s.Reminder = Key("ev1", time.Minute, start); return s }, true},
		{"the channel's reminder", func(s Snooze) Snooze { s.Subscription = "team"; return s }, true},
		{"a reminder of the moved meeting", func(s Snooze) Snooze {
			s.Reminder, s.Meeting = Key("ev1", 10*time.Minute, moved.Start), moved
			return s
		}, true},
		{"another mode", func(s Snooze) Snooze { s.Mode = SnoozeIn5m; return s }, false},
		{"another person", func(s Snooze) Snooze { s.User = "U2"; return s }, false},
		{"another meeting", func(s Snooze) Snooze { s.Meeting.ID = "ev2"; return s }, false},
	} {
		s := tt.s(base)
		if got := s.Timer(s.Meeting.Start).Group; (got == group) != tt.same {
			t.Errorf("%s: Group = %q beside %q, want the same: %v", tt.name, got, group, tt.same)
		}
	}
}
