package notify_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// sent posts r through the notifier at its trigger and returns the Follow
// that edits it into kind.
func (e *env) sent(t *testing.T, r meetingbot.Reminder, kind meetingbot.EditKind, movedTo time.Time, follows bool) meetingbot.Follow {
	t.Helper()
	e.clock.Set(r.TriggerAt)
	rc, err := e.slack.Notify(context.Background(), r)
	if err != nil {
		t.Fatalf("Notify(%s) = %v", r.Key, err)
	}
	return meetingbot.Follow{Reminder: r, Message: rc, SentAt: r.TriggerAt, Kind: kind, MovedTo: movedTo, Follows: follows}
}

// The golden files hold the chat.update payload exactly as Slack (the
// emulator) received it and took it, token aside.
func TestEditGolden(t *testing.T) {
	at10 := meetingStart.Add(time.Hour)
	markup := meeting()
	markup.Title = "*URGENT* <!channel> Q&A ~draft~"
	markup.Organizer = "<!here> Mallory & co"
	long := meeting()
	long.Title = strings.Repeat("&", 2600)
	long.Organizer = strings.Repeat("<Mallory> ", 400)
	private := meeting()
	private.Private = true
	tests := []struct {
		name    string
		r       meetingbot.Reminder
		kind    meetingbot.EditKind
		movedTo time.Time
		follows bool
		// unknown: the follow does not know the title (a meeting the
		// calendar no longer shows); the edit reads it back.
		unknown bool
		want    []string // in the edited message's blocks
	}{
		{"edit_moved", reminder(sub("#standup"), meeting(), 10*time.Minute), meetingbot.EditMoved, at10, true, false,
			[]string{"*Weekly sync* ~starts in 10 minutes~", "~<!date^1772442000^", "*Moved to <!date^1772445600^{date_short_pretty} {time}|2026-03-02 10:00 UTC>*, a new reminder will follow"}},
		{"edit_moved_no_new_reminder", reminder(sub("#standup"), meeting(), 10*time.Minute), meetingbot.EditMoved, meetingStart.Add(-time.Hour), false, false,
			[]string{"*Moved to <!date^1772438400^{date_short_pretty} {time}|2026-03-02 08:00 UTC>*"}},
		{"edit_cancelled", reminder(sub("#standup"), meeting(), 10*time.Minute), meetingbot.EditCancelled, time.Time{}, false, true,
			[]string{"*Weekly sync* ~starts in 10 minutes~", "*Cancelled*"}},
		{"edit_restored", reminder(sub("#standup"), meeting(), 10*time.Minute), meetingbot.EditRestored, time.Time{}, false, false,
			[]string{"*Weekly sync* starts in 10 minutes", "*When:* <!date^1772442000^"}},
		{"edit_hostile_moved", reminder(sub("#standup"), markup, 10*time.Minute), meetingbot.EditMoved, at10, true, false,
			[]string{"&lt;!channel&gt; Q&amp;A", "Mallory &amp; co"}},
		{"edit_hostile_cancelled_read_back", reminder(sub("#standup"), markup, 10*time.Minute), meetingbot.EditCancelled, time.Time{}, false, true,
			[]string{"&lt;!channel&gt; Q&amp;A", "*Cancelled*"}},
		{"edit_long_fields", reminder(sub("#standup"), long, 10*time.Minute), meetingbot.EditMoved, at10, true, false,
			[]string{"…* ~starts in 10 minutes~"}},
		{"edit_private_in_channel", reminder(sub("#standup"), private, 10*time.Minute), meetingbot.EditMoved, at10, true, false,
			[]string{"*Private meeting* ~starts in 10 minutes~"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			f := e.sent(t, tt.r, tt.kind, tt.movedTo, tt.follows)
			if tt.unknown {
				f.Reminder.Meeting = meetingbot.Meeting{ID: tt.r.Meeting.ID, Start: tt.r.Meeting.Start}
			}
			e.clock.Set(meetingStart.Add(-5 * time.Minute))
			if err := e.slack.Edit(context.Background(), f); err != nil {
				t.Fatalf("Edit() = %v", err)
			}
			got := recordedCall(t, e, "chat.update")
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
				t.Errorf("chat.update payload = %s\nwant %s\n(run go test ./notify -update if the change is intended)", got, want)
			}

			msgs := e.srv.Messages()
			if len(msgs) != 1 || msgs[0].Edited.IsZero() {
				t.Fatalf("messages = %+v, want the one reminder, edited in place", msgs)
			}
			var decoded any
			if err := json.Unmarshal(msgs[0].Blocks, &decoded); err != nil {
				t.Fatal(err)
			}
			texts := strings.Join(strs(decoded), "\n")
			for _, w := range tt.want {
				if !strings.Contains(texts, w) {
					t.Errorf("edited blocks say %q, want them to contain %q", texts, w)
				}
			}
			if follows := strings.Contains(texts, "a new reminder will follow"); follows != tt.follows {
				t.Errorf("edited blocks say %q: a new reminder will follow = %v, want %v", texts, follows, tt.follows)
			}
			if strings.Contains(texts, "&amp;amp;") || strings.Contains(texts, "&amp;lt;") {
				t.Errorf("edited blocks escape the title twice: %s", texts)
			}
			if md := msgs[0].Metadata; md == nil || md.EventPayload["key"] != tt.r.Key {
				t.Errorf("edited message metadata = %+v, want the reminder's, kept", md)
			}
			if found, ok, err := e.slack.Delivered(context.Background(), tt.r); err != nil || !ok || found.TS != f.Message.TS {
				t.Errorf("Delivered() after the edit = %+v, %v, %v; want the edited message", found, ok, err)
			}
			wantCalls := 1
			if tt.unknown {
				wantCalls = 2 // the read-back and the post-edit lookup
			}
			if n := len(e.srv.CallsTo("conversations.history")); n != wantCalls {
				t.Errorf("conversations.history calls = %d, want %d", n, wantCalls)
			}
		})
	}
}

// A restored message reads exactly as it was posted.
func TestEditRestoredIsAsPosted(t *testing.T) {
	e := newEnv(t)
	r := reminder(sub("#standup"), meeting(), 10*time.Minute)
	f := e.sent(t, r, meetingbot.EditMoved, meetingStart.Add(time.Hour), true)
	posted := e.srv.Messages()[0]
	e.clock.Set(meetingStart.Add(-8 * time.Minute))
	if err := e.slack.Edit(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	f.Kind, f.MovedTo = meetingbot.EditRestored, time.Time{}
	e.clock.Set(meetingStart.Add(-6 * time.Minute))
	if err := e.slack.Edit(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	got := e.srv.Messages()[0]
	if got.Text != posted.Text || string(got.Blocks) != string(posted.Blocks) {
		t.Errorf("restored message = %q %s\nwant as posted: %q %s", got.Text, got.Blocks, posted.Text, posted.Blocks)
	}
}

// Edit's failures: what no retry cures is permanent and says why; rate
// limits and 5xx are retried; blocks Slack refuses become text.
func TestEditErrors(t *testing.T) {
	tests := []struct {
		name      string
		setup     func(e *env, f *meetingbot.Follow)
		permanent bool   // the error, when want is set
		want      string // in the error; "" for none
		edited    string // in the message's text afterwards
	}{
		{"message deleted", func(e *env, f *meetingbot.Follow) { f.Message.TS = "1772441400.999999" }, true, "message_not_found", ""},
		{"message deleted, title unknown", func(e *env, f *meetingbot.Follow) {
			f.Message.TS = "1772441400.999999"
			f.Reminder.Meeting.Title = ""
		}, true, "message_not_found", ""},
		{"channel deleted", func(e *env, f *meetingbot.Follow) { f.Message.Channel = "C0GONE0001" }, true, "channel_not_found", ""},
		{"channel archived", func(e *env, f *meetingbot.Follow) {
			e.srv.UpdateChannel(slacktest.Channel{ID: "C0STANDUP1", Name: "standup", Member: true, Archived: true})
		}, true, "is_inactive", ""},
		{"edits refused", func(e *env, f *meetingbot.Follow) {
			e.srv.Fail("chat.update", "", slacktest.Fault{Error: "cant_update_message"})
		}, true, "cant_update_message", ""},
		{"edit window closed", func(e *env, f *meetingbot.Follow) {
			e.srv.Fail("chat.update", "", slacktest.Fault{Error: "edit_window_closed"})
		}, true, "edit_window_closed", ""},
		{"rate limited, then ok", func(e *env, f *meetingbot.Follow) {
			e.srv.Fail("chat.update", "", slacktest.Fault{Status: 429, RetryAfter: 7})
		}, false, "", "Moved to"},
		{"5xx, then ok", func(e *env, f *meetingbot.Follow) {
			e.srv.Fail("chat.update", "", slacktest.Fault{Status: 503}, slacktest.Fault{Error: "update_failed"})
		}, false, "", "Moved to"},
		{"5xx past the retries", func(e *env, f *meetingbot.Follow) {
			for range 5 {
				e.srv.Fail("chat.update", "", slacktest.Fault{Status: 500})
			}
		}, false, "500", ""},
		{"blocks refused", func(e *env, f *meetingbot.Follow) {
			e.srv.Fail("chat.update", "", slacktest.Fault{Error: "invalid_blocks"})
		}, false, "", "Weekly sync: Moved to <!date^1772445600^"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			f := e.sent(t, reminder(sub("#standup"), meeting(), 10*time.Minute), meetingbot.EditMoved, meetingStart.Add(time.Hour), true)
			tt.setup(e, &f)
			err := e.slack.Edit(context.Background(), f)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Edit() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || meetingbot.IsPermanent(err) != tt.permanent):
				t.Fatalf("Edit() = %v, want an error naming %q, permanent %v", err, tt.want, tt.permanent)
			}
			m := e.srv.Messages()[0]
			if tt.edited == "" {
				if !m.Edited.IsZero() {
					t.Errorf("message after a failed edit = %q, edited %v; want it untouched", m.Text, m.Edited)
				}
				return
			}
			if !strings.Contains(m.Text, tt.edited) || m.Edited.IsZero() {
				t.Errorf("message after Edit() = %q, want it edited to contain %q", m.Text, tt.edited)
			}
		})
	}
}

// The rate limit's wait is the one Slack asks for, and every attempt is
// observed under its method.
func TestEditWaitsOutRateLimit(t *testing.T) {
	e := newEnv(t)
	f := e.sent(t, reminder(sub("#standup"), meeting(), 10*time.Minute), meetingbot.EditCancelled, time.Time{}, false)
	e.srv.Fail("chat.update", "", slacktest.Fault{Status: 429, RetryAfter: 7})
	if err := e.slack.Edit(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	if sleeps := e.clock.Sleeps(); len(sleeps) != 1 || sleeps[0] != 7*time.Second {
		t.Errorf("waits = %v, want one of 7s (Retry-After)", sleeps)
	}
	var updates []string
	for _, c := range e.obs.all() {
		if strings.HasPrefix(c, "chat.update ") {
			updates = append(updates, c)
		}
	}
	if strings.Join(updates, ",") != "chat.update rate_limited,chat.update ok" {
		t.Errorf("observed chat.update attempts = %v, want rate_limited then ok", updates)
	}
}

// EditedMessage keeps every field within Slack's limits however long the
// event text, and the title is what is cut.
func TestEditedMessageFitsLimits(t *testing.T) {
	m := meeting()
	m.Title = strings.Repeat("<&>", 2000)
	m.Organizer = strings.Repeat("é", 4000)
	for _, kind := range []meetingbot.EditKind{meetingbot.EditMoved, meetingbot.EditCancelled, meetingbot.EditRestored} {
		f := meetingbot.Follow{Reminder: reminder(sub("#standup"), m, 10*time.Minute), Kind: kind,
			MovedTo: meetingStart.Add(time.Hour), Follows: true, SentAt: meetingStart.Add(-10 * time.Minute)}
		text, blocks := notify.EditedMessage(f)
		if len(text) > 3000 {
			t.Errorf("EditedMessage(%s) text = %d bytes, want at most 3000", kind, len(text))
		}
		b, _ := json.Marshal(blocks)
		var decoded []map[string]any
		if err := json.Unmarshal(b, &decoded); err != nil {
			t.Fatal(err)
		}
		for i, blk := range decoded {
			if txt, ok := blk["text"].(map[string]any); ok {
				if s, _ := txt["text"].(string); len(s) > 3000 {
					t.Errorf("EditedMessage(%s) block %d text = %d bytes, want at most 3000", kind, i, len(s))
				}
			}
		}
		if kind.Changed() && !strings.Contains(string(b), "Moved to") && !strings.Contains(string(b), "Cancelled") {
			t.Errorf("EditedMessage(%s) lost what happened to fit: %s", kind, b)
		}
	}
}
