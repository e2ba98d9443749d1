package action_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/meetingbot/meetingbot/notify/action"
)

// A mute button's value fits Slack's 2,000 characters whatever the title,
// keeps what it can of it, and reads back; an ID too long for any button
// gives no value at all, and then no button.
func TestMuteValueFitsAButton(t *testing.T) {
	title := strings.Repeat("Quarterly planning ", 50)
	v := action.MuteValue("slack:team@example.com=C0ENG00001", "series", title)
	if n := utf8.RuneCountInString(v); n > action.MaxButtonValue {
		t.Errorf("MuteValue(long title) has %d characters, want at most %d", n, action.MaxButtonValue)
	}
	got, ok := action.ParseMute(v)
	want := action.Mute{Subscription: "slack:team@example.com=C0ENG00001", Series: "series", Title: title[:99] + "…"}
	if !ok || got != want {
		t.Errorf("ParseMute(MuteValue(…)) = %+v, %v, want %+v", got, ok, want)
	}

	// Escapes grow in JSON: a title of 100 "<" takes 600 characters.
	long := strings.Repeat("x", 1500)
	v = action.MuteValue("slack:"+long, "series", strings.Repeat("<", 200))
	got, ok = action.ParseMute(v)
	if !ok || got.Title != "" || got.Series != "series" || utf8.RuneCountInString(v) > action.MaxButtonValue {
		t.Errorf("MuteValue(long ID, long title) = %d characters, %+v; want the title dropped to fit", utf8.RuneCountInString(v), got)
	}
	if v := action.MuteValue("slack:"+strings.Repeat("x", 2000), "series", "t"); v != "" {
		t.Errorf("MuteValue(ID over 2,000 characters) = %.40q…, want \"\"", v)
	}
	for _, bad := range []string{"", "{}", `{"subscription":"s"}`, "not json"} {
		if _, ok := action.ParseMute(bad); ok {
			t.Errorf("ParseMute(%q) = ok, want refused", bad)
		}
	}
}
