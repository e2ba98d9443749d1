package notify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/action"
	"github.com/slack-go/slack"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/notify")

// The golden files hold the chat.postMessage payload exactly as Slack (the
// emulator) received it, token aside.
func TestPayloadGolden(t *testing.T) {
	hostile := meeting()
	hostile.Title = "<!channel> <@U123> & <https://evil.example|click>"
	hostile.Organizer = "<!here> Mallory & co"
	hostile.JoinURL = "javascript:alert(1)"
	bare := meeting()
	bare.JoinURL, bare.Organizer, bare.Title = "", "", ""
	long := meeting()
	long.Title = strings.Repeat("&", 2600)
	long.Organizer = strings.Repeat("<Mallory> ", 400)
	long.JoinURL = "http://zoom.us/j/123?pwd=a&b"
	// One meeting per field an invitation's sender controls.
	hostileField := func(edit func(*meetingbot.Meeting)) meetingbot.Meeting {
		m := meeting()
		edit(&m)
		return m
	}
	lines := hostileField(func(m *meetingbot.Meeting) {
		m.Title = "Standup\n*Organizer:* CEO\n*Join:* https://evil.example/zoom"
	})
	markup := hostileField(func(m *meetingbot.Meeting) {
		m.Title = "*URGENT* _all hands_ ~cancelled~ `code` <#C0GENERAL1> #general @here"
		m.Organizer = "> quoted\n- listed"
	})
	bidi := hostileField(func(m *meetingbot.Meeting) {
		m.Title = "Invoice \u202egnp.exe\u202c\u200b review \u2066x\u2069"
		m.Organizer = "Al\u200bice\u200f\x1b]8;;https://evil.example\x07"
	})
	joinHTTP := hostileField(func(m *meetingbot.Meeting) { m.JoinURL = "http://evil.example/j/1" })
	joinUserinfo := hostileField(func(m *meetingbot.Meeting) { m.JoinURL = "https://zoom.us@evil.example/j/1" })
	joinHost := hostileField(func(m *meetingbot.Meeting) { m.JoinURL = "https://evil.example/zoom/j/1" })
	// Reminders of a series in a subscription made from Slack carry "Mute
	// this series"; a private one in a channel names no title there either.
	fromSlack := sub("C0STANDUP1")
	fromSlack.ID, fromSlack.FromSlack = "slack:alice@example.com=C0STANDUP1", true
	series := hostileField(func(m *meetingbot.Meeting) {
		m.Series = "evt123"
		m.Title = "Weekly *sync* <!here> & \"co\"\n"
	})
	privateSeries := series
	privateSeries.Private, privateSeries.Title = true, "Secret merger talks"
	tests := []struct {
		name   string
		rem    meetingbot.Reminder
		sendAt time.Time
	}{
		{"on_time_10m", reminder(sub("#standup"), meeting(), 10*time.Minute), meetingStart.Add(-10 * time.Minute)},
		{"starting_now", reminder(sub("#standup"), meeting(), 0), meetingStart},
		{"seconds_offset", reminder(sub("#standup"), meeting(), 90*time.Second), meetingStart.Add(-90 * time.Second)},
		{"long_offset", reminder(sub("#standup"), meeting(), 90*time.Minute), meetingStart.Add(-90 * time.Minute)},
		{"late", func() meetingbot.Reminder {
			r := reminder(sub("#standup"), meeting(), 10*time.Minute)
			r.Late = true
			return r
		}(), meetingStart.Add(-3 * time.Minute)},
		{"no_join_no_title", reminder(sub("#standup"), bare, 10*time.Minute), meetingStart.Add(-10 * time.Minute)},
		{"hostile_title", reminder(sub("#standup"), hostile, 10*time.Minute), meetingStart.Add(-10 * time.Minute)},
		{"long_fields", reminder(sub("#standup"), long, 10*time.Minute), meetingStart.Add(-10 * time.Minute)},
		{"hostile_lines", reminder(sub("#standup"), lines, 10*time.Minute), meetingStart.Add(-10 * time.Minute)},
		{"hostile_markup", reminder(sub("#standup"), markup, 10*time.Minute), meetingStart.Add(-10 * time.Minute)},
		{"hostile_bidi", reminder(sub("#standup"), bidi, 10*time.Minute), meetingStart.Add(-10 * time.Minute)},
		{"hostile_join_http", reminder(sub("#standup"), joinHTTP, 10*time.Minute), meetingStart.Add(-10 * time.Minute)},
		{"hostile_join_userinfo", reminder(sub("#standup"), joinUserinfo, 10*time.Minute), meetingStart.Add(-10 * time.Minute)},
		{"hostile_join_host", reminder(sub("#standup"), joinHost, 10*time.Minute), meetingStart.Add(-10 * time.Minute)},
		{"mute_series", reminder(fromSlack, series, 10*time.Minute), meetingStart.Add(-10 * time.Minute)},
		{"mute_series_private", reminder(fromSlack, privateSeries, 10*time.Minute), meetingStart.Add(-10 * time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.clock.Set(tt.sendAt)
			if _, err := e.slack.Notify(context.Background(), tt.rem); err != nil {
				t.Fatalf("Notify() error: %v", err)
			}
			got := recordedPayload(t, e)
			path := filepath.Join("..", "testdata", "notify", tt.name+".golden.json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./notify -update to create it)", err)
			}
			if string(got) != string(want) {
				t.Errorf("chat.postMessage payload = %s\nwant %s\n(run go test ./notify -update if the change is intended)", got, want)
			}
		})
	}
}

// recordedPayload renders the one chat.postMessage call the emulator got as
// indented JSON, with blocks and metadata expanded.
func recordedPayload(t *testing.T, e *env) []byte {
	t.Helper()
	return recordedCall(t, e, "chat.postMessage")
}

// recordedCall renders the one call of method the emulator got as indented
// JSON, with blocks and metadata expanded.
func recordedCall(t *testing.T, e *env, method string) []byte {
	t.Helper()
	calls := e.srv.CallsTo(method)
	if len(calls) != 1 {
		t.Fatalf("%s calls = %d, want 1", method, len(calls))
	}
	out := map[string]any{}
	for k, vs := range calls[0].Form {
		if k == "blocks" || k == "metadata" {
			out[k] = json.RawMessage(vs[0])
			continue
		}
		out[k] = strings.Join(vs, ",")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep Slack's <…> markup readable in the files
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestHostileTitleIsInert(t *testing.T) {
	e := newEnv(t)
	m := meeting()
	m.Title = "<!channel> <@U123> & <https://evil.example|click>"
	m.JoinURL = "javascript:alert(1)"
	if _, err := e.slack.Notify(context.Background(), reminder(sub("#standup"), m, 10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	call := e.srv.CallsTo("chat.postMessage")[0]
	var blocks any
	if err := json.Unmarshal([]byte(call.Form.Get("blocks")), &blocks); err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{"text": call.Form.Get("text"), "blocks": strings.Join(strs(blocks), "\n")}
	for field, got := range texts {
		for _, bad := range []string{"<!channel>", "<@U123>", "<https://evil", "javascript:", "& <"} {
			if strings.Contains(got, bad) {
				t.Errorf("payload %s contains %q: %s", field, bad, got)
			}
		}
		if !strings.Contains(got, "&lt;!channel&gt; &lt;@U123&gt; &amp; &lt;https://evil.example|click&gt;") {
			t.Errorf("payload %s lacks the escaped title: %s", field, got)
		}
	}
	if call.Form.Has("link_names") || call.Form.Get("parse") == "full" {
		t.Errorf("payload asks Slack to parse names: %v", call.Form)
	}
}

func TestMessageHeadline(t *testing.T) {
	late := reminder(sub(""), meeting(), 10*time.Minute)
	late.Late = true
	tests := []struct {
		offset time.Duration
		late   bool
		sendAt time.Duration // after the trigger
		want   string
	}{
		{10 * time.Minute, false, 0, "Weekly sync starts in 10 minutes (<!date^1772442000^{date_short_pretty} {time}|2026-03-02 09:00 UTC>)"},
		{0, false, 20 * time.Second, "Weekly sync is starting now (<!date^1772442000^{date_short_pretty} {time}|2026-03-02 09:00 UTC>)"},
		{30 * time.Second, false, 0, "Weekly sync starts in 30 seconds (<!date^1772442000^{date_short_pretty} {time}|2026-03-02 09:00 UTC>)"},
		{90 * time.Minute, false, 0, "Weekly sync starts in 1 hour 30 minutes (<!date^1772442000^{date_short_pretty} {time}|2026-03-02 09:00 UTC>)"},
		{25*time.Hour + time.Second, false, 0, "Weekly sync starts in 1 day 1 hour 1 second (<!date^1772442000^{date_short_pretty} {time}|2026-03-02 09:00 UTC>)"},
		{1500 * time.Millisecond, false, 0, "Weekly sync starts in 2 seconds (<!date^1772442000^{date_short_pretty} {time}|2026-03-02 09:00 UTC>)"},
		// Late, or sent long after the trigger: name the start, not a countdown.
		{10 * time.Minute, true, 7 * time.Minute, "Weekly sync starts at <!date^1772442000^{time}|09:00 UTC>"},
		{10 * time.Minute, false, 4 * time.Minute, "Weekly sync starts at <!date^1772442000^{time}|09:00 UTC>"},
		{0, true, 30 * time.Second, "Weekly sync starts at <!date^1772442000^{time}|09:00 UTC>"},
	}
	for _, tt := range tests {
		r := reminder(sub(""), meeting(), tt.offset)
		r.Late = tt.late
		got, blocks := notify.Message(r, r.TriggerAt.Add(tt.sendAt))
		if got != tt.want {
			t.Errorf("Message(offset %v, late %v, +%v) text = %q, want %q", tt.offset, tt.late, tt.sendAt, got, tt.want)
		}
		if len(blocks) != 3 {
			t.Errorf("Message(offset %v) blocks = %d, want 3 (headline, details, buttons)", tt.offset, len(blocks))
		}
	}
}

func TestMessageButtons(t *testing.T) {
	tests := []struct {
		join, link string
		want       []string
	}{
		{"https://meet.google.com/x", "https://calendar.google.com/e", []string{"join", "open_event"}},
		{"", "https://calendar.google.com/e", []string{"open_event"}},
		{"javascript:alert(1)", "ftp://x", nil},
		{"https://zoom.us/j/1", "", []string{"join"}},
	}
	for _, tt := range tests {
		m := meeting()
		m.JoinURL, m.HTMLLink = tt.join, tt.link
		_, blocks := notify.Message(reminder(sub(""), m, time.Minute), m.Start.Add(-time.Minute))
		b, _ := json.Marshal(blocks)
		var got []string
		for _, id := range []string{"join", "open_event"} {
			if strings.Contains(string(b), `"action_id":"`+id+`"`) {
				got = append(got, id)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Message(join %q, link %q) buttons = %v, want %v", tt.join, tt.link, got, tt.want)
		}
	}
}

// strs collects every string in a decoded JSON value.
func strs(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, strs(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, e := range v {
			out = append(out, strs(e)...)
		}
		return out
	}
	return nil
}

// Only a reminder of a recurring meeting in a subscription made from Slack
// has "Mute this series", and its value names that subscription and series.
func TestMuteButton(t *testing.T) {
	operator := sub("")
	fromSlack := sub("U0ALICE001")
	fromSlack.ID, fromSlack.FromSlack = "slack:alice@example.com=U0ALICE001", true
	recurring := meeting()
	recurring.Series = "evt123"
	tests := []struct {
		name string
		sub  meetingbot.Subscription
		m    meetingbot.Meeting
		want bool
	}{
		{"made in Slack, recurring", fromSlack, recurring, true},
		{"made in Slack, single event", fromSlack, meeting(), false},
		{"operator's, recurring", operator, recurring, false},
	}
	for _, tt := range tests {
		_, blocks := notify.Message(reminder(tt.sub, tt.m, time.Minute), tt.m.Start.Add(-time.Minute))
		var value string
		for _, b := range blocks {
			if a, ok := b.(*slack.ActionBlock); ok {
				for _, el := range a.Elements.ElementSet {
					if btn, ok := el.(*slack.ButtonBlockElement); ok && btn.ActionID == action.MuteSeries {
						value = btn.Value
					}
				}
			}
		}
		if (value != "") != tt.want {
			t.Errorf("Message(%s) has a mute button: %v, want %v", tt.name, value != "", tt.want)
			continue
		}
		if !tt.want {
			continue
		}
		got, ok := action.ParseMute(value)
		want := action.Mute{Subscription: fromSlack.ID, Series: "evt123", Title: "Weekly sync"}
		if !ok || got != want {
			t.Errorf("Message(%s) mute value = %+v, want %+v", tt.name, got, want)
		}
	}
}
