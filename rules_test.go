package meetingbot_test

import (
	"slices"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Each rule skips what it names and nothing else; working hours are the
// person's, in their zone, and a meeting they accepted or organize still
// reminds outside them.
func TestRulesSkipWhatTheyName(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	hours, err := meetingbot.ParseHours("09:00-18:00 mon-fri", "Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	link := "https://meet.google.com/abc-defg-hij"
	monday10 := time.Date(2026, 11, 30, 10, 0, 0, 0, paris)
	monday20 := time.Date(2026, 11, 30, 20, 0, 0, 0, paris)
	saturday10 := time.Date(2026, 12, 5, 10, 0, 0, 0, paris)
	monday0830UTC := time.Date(2026, 11, 30, 8, 30, 0, 0, time.UTC) // 09:30 in Paris
	m := func(edit func(*meetingbot.Meeting)) meetingbot.Meeting {
		x := meetingbot.Meeting{ID: "m", Start: monday10, JoinURL: link, Others: 2, Response: meetingbot.ResponseAccepted}
		edit(&x)
		return x
	}
	tests := []struct {
		name  string
		rules meetingbot.Rules
		m     meetingbot.Meeting
		want  string
	}{
		{"no rules, unanswered", meetingbot.Rules{}, m(func(x *meetingbot.Meeting) { x.Response = meetingbot.ResponseNeedsAction }), ""},
		{"unanswered", meetingbot.Rules{SkipUnanswered: true}, m(func(x *meetingbot.Meeting) { x.Response = meetingbot.ResponseNeedsAction }), "unanswered"},
		{"unanswered, accepted", meetingbot.Rules{SkipUnanswered: true}, m(func(*meetingbot.Meeting) {}), ""},
		{"maybe", meetingbot.Rules{SkipMaybe: true}, m(func(x *meetingbot.Meeting) { x.Response = meetingbot.ResponseTentative }), "maybe"},
		{"maybe, unanswered", meetingbot.Rules{SkipMaybe: true}, m(func(x *meetingbot.Meeting) { x.Response = meetingbot.ResponseNeedsAction }), ""},
		{"alone", meetingbot.Rules{SkipAlone: true}, m(func(x *meetingbot.Meeting) { x.Others = 0 }), "alone"},
		{"alone, guests hidden", meetingbot.Rules{SkipAlone: true}, m(func(x *meetingbot.Meeting) { x.Others, x.OthersHidden = 0, true }), ""},
		{"alone, with guests", meetingbot.Rules{SkipAlone: true}, m(func(*meetingbot.Meeting) {}), ""},
		{"nolink", meetingbot.Rules{SkipNoLink: true}, m(func(x *meetingbot.Meeting) { x.JoinURL = "" }), "nolink"},
		{"nolink, with link", meetingbot.Rules{SkipNoLink: true}, m(func(*meetingbot.Meeting) {}), ""},
		{"hours, within, maybe", meetingbot.Rules{Hours: &hours}, m(func(x *meetingbot.Meeting) { x.Response = meetingbot.ResponseTentative }), ""},
		{"hours, within in Paris, not in UTC", meetingbot.Rules{Hours: &hours}, m(func(x *meetingbot.Meeting) {
			x.Start, x.Response = monday0830UTC, meetingbot.ResponseTentative
		}), ""},
		{"hours, evening, unanswered", meetingbot.Rules{Hours: &hours}, m(func(x *meetingbot.Meeting) {
			x.Start, x.Response = monday20, meetingbot.ResponseNeedsAction
		}), "hours"},
		{"hours, saturday, maybe", meetingbot.Rules{Hours: &hours}, m(func(x *meetingbot.Meeting) {
			x.Start, x.Response = saturday10, meetingbot.ResponseTentative
		}), "hours"},
		{"hours, evening, accepted", meetingbot.Rules{Hours: &hours}, m(func(x *meetingbot.Meeting) { x.Start = monday20 }), ""},
		{"hours, saturday, own event", meetingbot.Rules{Hours: &hours}, m(func(x *meetingbot.Meeting) {
			x.Start, x.Response = saturday10, meetingbot.ResponseNone
		}), ""},
	}
	for _, tt := range tests {
		if got := tt.rules.Skipped(tt.m); got != tt.want {
			t.Errorf("%s: Skipped() = %q, want %q", tt.name, got, tt.want)
		}
		sub := meetingbot.Subscription{ID: "s", Offsets: []time.Duration{time.Minute}, Rules: tt.rules}
		if got := len(sub.OffsetsFor(tt.m)) == 0; got != (tt.want != "") {
			t.Errorf("%s: OffsetsFor() empty = %v, want %v", tt.name, got, tt.want != "")
		}
	}
}

func TestParseHours(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"09:00-18:00 mon-fri", "09:00-18:00 mon-fri (Europe/Paris)"},
		{"8:30-17:00", "08:30-17:00 mon-fri (Europe/Paris)"},
		{"10:00-16:00 mon,wed,fri", "10:00-16:00 mon,wed,fri (Europe/Paris)"},
		{"10:00-24:00 sat-sun", "10:00-24:00 sat,sun (Europe/Paris)"},
		{"07:00-12:00 fri-mon", "07:00-12:00 mon,fri-sun (Europe/Paris)"},
	}
	for _, tt := range tests {
		h, err := meetingbot.ParseHours(tt.in, "Europe/Paris")
		if err != nil || h.String() != tt.want {
			t.Errorf("ParseHours(%q) = %q, %v; want %q", tt.in, h.String(), err, tt.want)
		}
	}
	for _, bad := range []string{"", "9-5", "18:00-09:00 mon-fri", "09:00-18:00 weekdays", "09:00-18:00 mon-fri extra", "09:60-10:00"} {
		if _, err := meetingbot.ParseHours(bad, "UTC"); err == nil {
			t.Errorf("ParseHours(%q) = nil error, want one", bad)
		}
	}
}

// A subscription that reminds as the calendar says reminds at each
// meeting's popups and its fixed offsets, one reminder per minutes, and
// reads far enough ahead for the popups it follows.
func TestOffsetsForOnCalendar(t *testing.T) {
	m := meetingbot.Meeting{ID: "m", Reminders: []time.Duration{10 * time.Minute, 30 * time.Minute, 8 * 24 * time.Hour}}
	sub := meetingbot.Subscription{ID: "s", Offsets: []time.Duration{5 * time.Minute, 10 * time.Minute}}
	if got := sub.OffsetsFor(m); !slices.Equal(got, sub.Offsets) {
		t.Errorf("OffsetsFor(fixed only) = %v, want %v", got, sub.Offsets)
	}
	sub.OnCalendar = true
	want := []time.Duration{5 * time.Minute, 10 * time.Minute, 30 * time.Minute} // a popup beyond CalendarReach is not followed
	if got := sub.OffsetsFor(m); !slices.Equal(got, want) {
		t.Errorf("OffsetsFor(on calendar) = %v, want %v", got, want)
	}
	if sub.MaxOffset() != meetingbot.CalendarReach || sub.MinOffset() != 0 {
		t.Errorf("MaxOffset, MinOffset = %v, %v; want %v, 0", sub.MaxOffset(), sub.MinOffset(), meetingbot.CalendarReach)
	}
	if !sub.FromCalendar(30*time.Minute) || sub.FromCalendar(10*time.Minute) {
		t.Errorf("FromCalendar(30m, 10m) = %v, %v; want true, false", sub.FromCalendar(30*time.Minute), sub.FromCalendar(10*time.Minute))
	}
}
