package selfservice

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The words of docs/usage.md's table for the calendar's own reminders and the
// rules, for a person and after subscribe.
func TestParseRemindingAndRules(t *testing.T) {
	lim := Limits{Tick: 30 * time.Second, StartGrace: time.Minute}
	m := time.Minute
	tests := []struct {
		text string
		want request
		err  string
	}{
		{"on calendar", request{verb: verbOn, onCalendar: true}, ""},
		{"on calendar,5m", request{verb: verbOn, offsets: []time.Duration{5 * m}, onCalendar: true}, ""},
		{"on 5m, Calendar", request{verb: verbOn, offsets: []time.Duration{5 * m}, onCalendar: true}, ""},
		{"offsets calendar", request{verb: verbOffsets, onCalendar: true}, ""},
		{"skip unanswered", request{verb: verbSkip, rules: []ruleChange{{skip: "unanswered", on: true}}}, ""},
		{"skip maybe", request{verb: verbSkip, rules: []ruleChange{{skip: "maybe", on: true}}}, ""},
		{"skip alone", request{verb: verbSkip, rules: []ruleChange{{skip: "alone", on: true}}}, ""},
		{"SKIP NoLink", request{verb: verbSkip, rules: []ruleChange{{skip: "nolink", on: true}}}, ""},
		{"unskip maybe", request{verb: verbUnskip, rules: []ruleChange{{skip: "maybe"}}}, ""},
		{"hours 09:00-18:00 mon-fri", request{verb: verbHours, rules: []ruleChange{{hours: "09:00-18:00 mon-fri"}}}, ""},
		{"hours 8:00-16:30", request{verb: verbHours, rules: []ruleChange{{hours: "8:00-16:30"}}}, ""},
		{"hours off", request{verb: verbHours, rules: []ruleChange{{hours: "off"}}}, ""},
		{"subscribe team@example.com calendar,5m skip alone hours 09:00-17:00 mon-thu", request{verb: verbSubscribe, calendar: "team@example.com",
			offsets: []time.Duration{5 * m}, onCalendar: true, rules: []ruleChange{{skip: "alone", on: true}, {hours: "09:00-17:00 mon-thu"}}}, ""},
		{"subscribe team@example.com unskip nolink", request{verb: verbSubscribe, calendar: "team@example.com", rules: []ruleChange{{skip: "nolink"}}}, ""},
		{"skip", request{}, "takes `unanswered`"},
		{"skip lunch", request{}, "takes `unanswered`"},
		{"skip maybe please", request{}, "is not understood"},
		{"hours", request{}, "needs your working hours"},
		{"hours 18:00-09:00", request{}, "ends before it starts"},
		{"hours 9-5", request{}, "not a time range"},
		{"on calendar,soon", request{}, "not a list of offsets"},
		{"subscribe team@example.com skip", request{}, "takes `unanswered`"},
	}
	for _, tt := range tests {
		got, err := parse(tt.text, "/meetingbot", lim)
		if tt.err != "" {
			var ue *usageError
			if assert.ErrorAs(t, err, &ue, "parse(%q)", tt.text) {
				assert.ErrorContains(t, err, tt.err, "parse(%q)", tt.text)
			}
			continue
		}
		if assert.NoError(t, err, "parse(%q)", tt.text) {
			assert.Equal(t, tt.want, got, "parse(%q)", tt.text)
		}
	}
}

func TestRemindedText(t *testing.T) {
	m := time.Minute
	for _, tt := range []struct {
		offsets []time.Duration
		onCal   bool
		want    string
	}{
		{[]time.Duration{10 * m}, false, "10m before each meeting"},
		{nil, true, "at each meeting's own reminders in Google Calendar"},
		{[]time.Duration{5 * m}, true, "at each meeting's own reminders in Google Calendar and 5m before it"},
	} {
		assert.Equal(t, tt.want, remindedText(tt.offsets, tt.onCal), "remindedText(%v, %v)", tt.offsets, tt.onCal)
	}
}
