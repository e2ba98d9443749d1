package selfservice

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestParse is docs/usage.md's command table, word for word, and what it must
// refuse.
func TestParse(t *testing.T) {
	lim := Limits{Tick: 30 * time.Second, StartGrace: time.Minute}
	m := time.Minute
	tests := []struct {
		text string
		want request
		err  string // a part of the usage error, "" for none
	}{
		{"", request{verb: verbHelp}, ""},
		{"  help ", request{verb: verbHelp}, ""},
		{"Help me", request{verb: verbHelp}, ""},
		{"on", request{verb: verbOn}, ""},
		{"on 10m,1m", request{verb: verbOn, offsets: []time.Duration{m, 10 * m}}, ""},
		{"ON 1m, 10m", request{verb: verbOn, offsets: []time.Duration{m, 10 * m}}, ""},
		{"on 1h30m 0", request{verb: verbOn, offsets: []time.Duration{0, 90 * m}}, ""},
		{"on 1.5m", request{verb: verbOn, offsets: []time.Duration{90 * time.Second}}, ""},
		{"off", request{verb: verbOff}, ""},
		{"offsets 5m,0", request{verb: verbOffsets, offsets: []time.Duration{0, 5 * m}}, ""},
		{"offsets 7m,168h", request{verb: verbOffsets, offsets: []time.Duration{7 * m, 168 * time.Hour}}, ""},
		{"agenda 08:30", request{verb: verbAgenda, agenda: "08:30"}, ""},
		{"agenda 8:30", request{verb: verbAgenda, agenda: "08:30"}, ""},
		{"agenda 23:59", request{verb: verbAgenda, agenda: "23:59"}, ""},
		{"agenda off", request{verb: verbAgenda}, ""},
		{"agenda OFF", request{verb: verbAgenda}, ""},
		{"subscribe Team@Example.com", request{verb: verbSubscribe, calendar: "team@example.com"}, ""},
		{"subscribe c_abc123@group.calendar.google.com 15m", request{verb: verbSubscribe, calendar: "c_abc123@group.calendar.google.com", offsets: []time.Duration{15 * m}}, ""},
		{"subscribe <mailto:bob@example.com|bob@example.com> 5m,0", request{verb: verbSubscribe, calendar: "bob@example.com", offsets: []time.Duration{0, 5 * m}}, ""},
		{"unsubscribe team@example.com", request{verb: verbUnsubscribe, calendar: "team@example.com"}, ""},
		{"list", request{verb: verbList}, ""},
		{"what", request{verb: verbHelp, unknown: "what"}, ""},

		{"offsets 5 minutes", request{}, "`/meetingbot offsets 5m,0`"},
		{"offsets 5", request{}, "not a list of offsets"},
		{"offsets 10m,,1m,", request{verb: verbOffsets, offsets: []time.Duration{m, 10 * m}}, ""},
		{"offsets -1m", request{}, "negative"},
		{"offsets 1m500ms", request{}, "whole number of seconds"},
		{"offsets 168h1s", request{}, "more than 168h"},
		{"offsets 1m,60s", request{}, "appears twice"},
		{"offsets 20s", request{}, "too close to the start"},
		{"offsets", request{}, "needs the times"},
		{"on soon", request{}, "`/meetingbot on 10m,1m`"},
		{"off now", request{}, "takes nothing"},
		{"agenda 24:00", request{}, "not a time of day"},
		{"agenda 08:3", request{}, "not a time of day"},
		{"agenda -1:30", request{}, "not a time of day"},
		{"agenda 08:30 09:30", request{}, "a time of day or `off`"},
		{"subscribe", request{}, "needs a calendar ID"},
		{"subscribe team", request{}, "not a calendar ID"},
		{"subscribe a@b@c", request{}, "not a calendar ID"},
		{"subscribe @example.com", request{}, "not a calendar ID"},
		{"subscribe <#C123|eng>", request{}, "that is a channel"},
		{"subscribe <@U123>", request{}, "that is a person"},
		{"unsubscribe a@b.c 10m", request{}, "only the calendar ID"},
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

// TestOffsetsAgainstTheTick: no offset the sweep could miss, as config
// refuses for REMINDER_OFFSETS.
func TestOffsetsAgainstTheTick(t *testing.T) {
	for _, tt := range []struct {
		lim     Limits
		offsets string
		ok      bool
	}{
		{Limits{Tick: time.Minute, StartGrace: time.Minute}, "1m,0", true},
		{Limits{Tick: time.Minute, StartGrace: time.Minute}, "59s", false},
		{Limits{Tick: 2 * time.Minute, StartGrace: time.Minute}, "2m", true},
		{Limits{Tick: 2 * time.Minute, StartGrace: time.Minute}, "0", false},
		{Limits{Tick: 2 * time.Minute, StartGrace: time.Minute}, "10m,0", false},
		{Limits{}, "1s,0", true},
		{Limits{Count: 2}, "3m,2m,1m", false},
	} {
		_, err := parseOffsetsArg(tt.offsets, "/meetingbot offsets 5m,0", tt.lim)
		assert.Equal(t, tt.ok, err == nil, "parseOffsetsArg(%q, tick %v) error = %v", tt.offsets, tt.lim.Tick, err)
	}
}

func TestWording(t *testing.T) {
	m := time.Minute
	for _, tt := range []struct {
		offsets []time.Duration
		each    string
		label   string
	}{
		{[]time.Duration{m, 10 * m}, "10m and 1m before each meeting", "10m and 1m before"},
		{[]time.Duration{0, 5 * m}, "5m before each meeting and as it starts", "5m before and at the start"},
		{[]time.Duration{0}, "as each meeting starts", "At the start"},
		{[]time.Duration{90 * time.Second, time.Hour, 10 * m}, "1h, 10m and 90s before each meeting", "1h, 10m and 90s before"},
	} {
		assert.Equal(t, tt.each, eachMeeting(tt.offsets), "eachMeeting(%v)", tt.offsets)
		assert.Equal(t, tt.label, offsetsLabel(tt.offsets), "offsetsLabel(%v)", tt.offsets)
	}
}
