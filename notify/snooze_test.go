package notify_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/action"
	"github.com/slack-go/slack"
)

// snoozeButtons returns the snooze buttons among blocks: action ID to
// value.
func snoozeButtons(t *testing.T, blocks []slack.Block) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, b := range blocks {
		a, ok := b.(*slack.ActionBlock)
		if !ok {
			continue
		}
		for _, el := range a.Elements.ElementSet {
			if btn, ok := el.(*slack.ButtonBlockElement); ok && strings.Contains(btn.ActionID, "snooze") {
				out[btn.ActionID] = btn.Value
			}
		}
	}
	return out
}

// TestSnoozeButtonsWhileTheMeetingIsAhead: a reminder carries "Remind me
// at start" until its meeting starts, and "In 5 min" while six minutes or
// more remain; the buttons name the reminder and its meeting as shown.
func TestSnoozeButtonsWhileTheMeetingIsAhead(t *testing.T) {
	m := meeting()
	sub := meetingbot.Subscription{ID: "team", CalendarID: "team@example.com", Destination: "C0STANDUP1"}
	for _, tt := range []struct {
		name   string
		before time.Duration
		want   []string
	}{
		{"ten minutes ahead", 10 * time.Minute, []string{action.SnoozeStart, action.Snooze5m}},
		{"six minutes ahead", 6 * time.Minute, []string{action.SnoozeStart, action.Snooze5m}},
		{"five minutes ahead", 5*time.Minute + 59*time.Second, []string{action.SnoozeStart}},
		{"starting now", 0, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := meetingbot.Reminder{Key: meetingbot.Key(m.ID, tt.before, m.Start), Subscription: sub, Meeting: m, Offset: tt.before, TriggerAt: m.Start.Add(-tt.before)}
			got := snoozeButtons(t, blocksOf(notify.Message(r, r.TriggerAt)))
			if len(got) != len(tt.want) {
				t.Fatalf("snooze buttons %v, want %v", got, tt.want)
			}
			for _, id := range tt.want {
				v, ok := action.ParseSnooze(got[id])
				if !ok || v.Subscription != "team" || v.Reminder != r.Key || v.Event != m.ID || v.Start != m.Start.Unix() || v.Title != m.Title {
					t.Errorf("%s value %q, want the reminder %s of %s", id, got[id], r.Key, m.ID)
				}
			}
		})
	}
}

func blocksOf(_ string, blocks []slack.Block) []slack.Block { return blocks }

// TestNotifySnoozeDMsThePersonAndIsFoundAgain: a snooze's DM goes to the
// person who clicked, says they asked for it (and, moved, the new time),
// carries the reminder first clicked on its buttons, and is found again
// by its timer's key.
func TestNotifySnoozeDMsThePersonAndIsFoundAgain(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	m := meeting()
	of := meetingbot.Snooze{User: "U0ALICE001", Mode: meetingbot.SnoozeIn5m, Reminder: meetingbot.Key(m.ID, 10*time.Minute, m.Start),
		Subscription: "team", Calendar: "team@example.com", Meeting: m}
	fire := meetingStart.Add(-10 * time.Minute)
	tm := of.Timer(fire)
	moved := m
	moved.Start, moved.End = m.Start.Add(time.Hour), m.End.Add(time.Hour)
	r := meetingbot.Reminder{Key: tm.Key, Subscription: meetingbot.Subscription{ID: meetingbot.SnoozeSubscription("U0ALICE001"), Destination: "U0ALICE001"},
		Meeting: moved, Offset: moved.Start.Sub(fire), TriggerAt: fire}
	rc, err := e.slack.NotifySnooze(ctx, r, of, true)
	if err != nil {
		t.Fatal(err)
	}
	msgs := e.srv.Messages()
	if len(msgs) != 1 || msgs[0].Channel != rc.Channel || !strings.HasPrefix(rc.Channel, "D") {
		t.Fatalf("messages %+v, want one DM at %+v", msgs, rc)
	}
	body := strings.ReplaceAll(string(msgs[0].Blocks), `\u003c`, "<")
	if !strings.Contains(body, "You asked me to remind you.") || !strings.Contains(body, "It moved: it now starts at <!date^"+fmtUnix(moved.Start)) {
		t.Errorf("snooze DM %s, want the note and the new time", body)
	}
	if msgs[0].Metadata == nil || msgs[0].Metadata.EventPayload["key"] != tm.Key {
		t.Errorf("metadata %+v, want the timer's key %s", msgs[0].Metadata, tm.Key)
	}
	var blocks slack.Blocks
	if err := json.Unmarshal(msgs[0].Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	buttons := snoozeButtons(t, blocks.BlockSet)
	v, ok := action.ParseSnooze(buttons[action.SnoozeStart])
	if !ok || v.Subscription != "team" || v.Reminder != of.Reminder {
		t.Errorf("Remind me at start on the snooze's DM = %q, want the reminder first clicked", buttons[action.SnoozeStart])
	}
	got, found, err := e.slack.Delivered(ctx, r)
	if err != nil || !found || got != rc {
		t.Errorf("Delivered = %+v, %v, %v; want %+v", got, found, err, rc)
	}
}

func fmtUnix(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }

// TestSnoozeOfAPrivateMeetingShowsWhatTheClickShowed: the DM of a snooze
// of a private meeting shows what the reminder clicked showed the same
// person: its owner, who clicked their own DM, reads the title; anyone
// who clicked a channel's reminder, "Private meeting" and the time.
func TestSnoozeOfAPrivateMeetingShowsWhatTheClickShowed(t *testing.T) {
	m := privateMeeting(true)
	for _, tt := range []struct {
		name    string
		clicked string // the title the reminder clicked showed
		want    string
	}{
		{"the owner, from their DM", m.Title, "Board: layoffs 2026"},
		{"someone, from a channel", "Private meeting", "Private meeting"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			snapshot := meetingbot.Meeting{ID: m.ID, Title: tt.clicked, Start: m.Start, End: m.End}
			of := meetingbot.Snooze{User: "U0ALICE001", Mode: meetingbot.SnoozeAtStart, Reminder: meetingbot.Key(m.ID, 10*time.Minute, m.Start),
				Subscription: "team", Calendar: "alice@example.com", Meeting: snapshot}
			tm := of.Timer(m.Start)
			// As snooze.shownAs gives it: the snapshot's title, the
			// calendar's time, no join link the click did not show.
			shown := meetingbot.Meeting{ID: m.ID, Title: tt.clicked, Start: m.Start, End: m.End, Private: true}
			r := meetingbot.Reminder{Key: tm.Key, Subscription: meetingbot.Subscription{ID: meetingbot.SnoozeSubscription("U0ALICE001"), CalendarID: "alice@example.com", Destination: "U0ALICE001"},
				Meeting: shown, TriggerAt: m.Start}
			if _, err := e.slack.NotifySnooze(t.Context(), r, of, false); err != nil {
				t.Fatal(err)
			}
			msgs := e.srv.Messages()
			if len(msgs) != 1 {
				t.Fatalf("messages %+v, want one DM", msgs)
			}
			if !strings.Contains(msgs[0].Text, tt.want) || !strings.Contains(string(msgs[0].Blocks), tt.want) {
				t.Errorf("snooze DM %q %s, want the title %q", msgs[0].Text, msgs[0].Blocks, tt.want)
			}
			for _, secret := range []string{"meet.google.com", "CEO Office"} {
				if strings.Contains(string(msgs[0].Blocks), secret) {
					t.Errorf("snooze DM %s shows %q, which the click did not", msgs[0].Blocks, secret)
				}
			}
		})
	}
}

// TestNoSnoozeButtonsWhenNothingAnswersThem: without Config.Snooze (no
// self-service to answer a click) a reminder has no snooze buttons, and
// keeps its others.
func TestNoSnoozeButtonsWhenNothingAnswersThem(t *testing.T) {
	e := newEnv(t, func(c *notify.Config) { c.Snooze = false })
	m := meeting()
	r := meetingbot.Reminder{Key: meetingbot.Key(m.ID, 10*time.Minute, m.Start), Meeting: m, Offset: 10 * time.Minute, TriggerAt: m.Start.Add(-10 * time.Minute),
		Subscription: meetingbot.Subscription{ID: "team", CalendarID: "team@example.com", Destination: "C0STANDUP1"}}
	if _, err := e.slack.Notify(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	body := string(e.srv.Messages()[0].Blocks)
	if strings.Contains(body, "snooze") || !strings.Contains(body, `"action_id":"join"`) {
		t.Errorf("reminder without Config.Snooze = %s, want Join and no snooze button", body)
	}
}

// TestDigestLinesCarryRemindMeAtStart: each meeting a digest lists has its
// own "Remind me at start", naming its own reminder, with its Join as a
// link in the line; without Config.Snooze the lines keep the link and lose
// the button.
func TestDigestLinesCarryRemindMeAtStart(t *testing.T) {
	for _, snooze := range []bool{true, false} {
		e := newEnv(t, func(c *notify.Config) { c.Snooze = snooze })
		rs := flood(8)
		e.clock.Set(meetingStart.Add(-40 * time.Second))
		if _, err := e.slack.NotifyDigest(t.Context(), rs); err != nil {
			t.Fatal(err)
		}
		var blocks slack.Blocks
		if err := json.Unmarshal(e.srv.Messages()[0].Blocks, &blocks); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, b := range blocks.BlockSet {
			sec, ok := b.(*slack.SectionBlock)
			if !ok || sec.Accessory == nil || sec.Accessory.ButtonElement == nil || sec.Accessory.ButtonElement.ActionID != action.SnoozeStart {
				continue
			}
			v, ok := action.ParseSnooze(sec.Accessory.ButtonElement.Value)
			if !ok {
				t.Fatalf("digest button value %q is not a snooze", sec.Accessory.ButtonElement.Value)
			}
			keys = append(keys, v.Reminder)
		}
		var want []string
		if snooze {
			for _, r := range rs {
				want = append(want, meetingbot.SnoozedReminder(r.Key))
			}
		}
		if !slices.Equal(keys, want) {
			t.Errorf("Config.Snooze=%v: digest snooze buttons name %v, want %v", snooze, keys, want)
		}
		if body := string(e.srv.Messages()[0].Blocks); !strings.Contains(body, `|Join\u003e`) {
			t.Errorf("Config.Snooze=%v: digest lines lack the Join link: %s", snooze, body)
		}
	}
}
