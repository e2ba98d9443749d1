package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	gcal "google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/notify/action"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
)

// End-to-end tests of "Remind me at start" on the built binary: the team
// calendar posted in #eng (CALENDARS), self-service on, Bob clicking the
// button of its reminder as Slack sends a click, signed.

// snoozeEnv is w's environment for the snooze tests: the team calendar's
// reminders 10 seconds ahead in #eng, and self-service to answer clicks.
func (w *world) snoozeEnv(overrides ...string) map[string]string {
	env := w.selfServiceEnv(append([]string{"CALENDARS=" + teamID, "REMINDER_OFFSETS=10s"}, overrides...)...)
	return env
}

// buttonValue returns the value of the button actionID on m, "" when m
// has none.
func buttonValue(m slacktest.Message, actionID string) string {
	var blocks []struct {
		Elements []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"elements"`
	}
	_ = json.Unmarshal(m.Blocks, &blocks)
	for _, b := range blocks {
		for _, e := range b.Elements {
			if e.ActionID == actionID {
				return e.Value
			}
		}
	}
	return ""
}

// clickBody is the signed body of Bob clicking actionID (value) on the
// message m in channel at actionTS, with respURL, as Slack posts a
// block_actions payload to the request URL.
func clickBody(m slacktest.Message, channel, actionID, value, actionTS, respURL string) []byte {
	payload, _ := json.Marshal(map[string]any{
		"type": "block_actions", "user": map[string]any{"id": bobID, "username": "bob", "name": "bob", "team_id": slacktest.TeamID},
		"api_app_id": slacktest.AppID, "token": "9s8d9as89d8as9d8as989",
		"container":  map[string]any{"type": "message", "message_ts": m.TS, "channel_id": channel, "is_ephemeral": false},
		"trigger_id": "12321423423.333649436676.d8c1bb837935619ccad0f624c448ffb3",
		"team":       map[string]any{"id": slacktest.TeamID, "domain": "example"},
		"channel":    map[string]any{"id": channel, "name": "eng"},
		"message":    map[string]any{"bot_id": slacktest.BotID, "type": "message", "text": m.Text, "user": slacktest.BotUserID, "ts": m.TS},
		"state":      map[string]any{"values": map[string]any{}}, "response_url": respURL,
		"actions": []any{map[string]any{
			"action_id": actionID, "block_id": "reminder_actions", "type": "button", "value": value,
			"text": map[string]any{"type": "plain_text", "text": "Remind me at start", "emoji": true}, "action_ts": actionTS,
		}},
	})
	return []byte(url.Values{"payload": {string(payload)}}.Encode())
}

// click posts body to the bot at addr and fails unless Slack hears back
// 200 within 3 seconds.
func click(t *testing.T, addr string, body []byte) {
	t.Helper()
	began := time.Now()
	status, answer, err := slacktest.PostSigned(context.Background(), "http://"+addr+"/slack/interactivity", "application/x-www-form-urlencoded", body, signingSecret)
	if err != nil || status != http.StatusOK {
		t.Fatalf("POST /slack/interactivity = %d %s %v, want 200", status, answer, err)
	}
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("the click was acknowledged after %v, want within Slack's 3s", took)
	}
}

// answered waits for the answer on respURL that starts with prefix.
func (w *world) answered(t *testing.T, respURL, prefix string) {
	t.Helper()
	eventually(t, 3*time.Second, "the answer "+prefix, func() bool {
		for _, r := range w.slack.Responses() {
			if r.URL == respURL && strings.HasPrefix(r.Text, prefix) && r.ResponseType == "ephemeral" {
				return true
			}
		}
		return false
	})
}

// snoozeDMs returns the messages in Bob's DM whose metadata names a
// snooze.
func (w *world) snoozeDMs() []slacktest.Message {
	var out []slacktest.Message
	for _, m := range w.slack.Messages() {
		if m.Metadata != nil && fmt.Sprint(m.Metadata.EventPayload["subscription"]) == meetingbot.SnoozeSubscription(bobID) {
			out = append(out, m)
		}
	}
	return out
}

func stamp(t time.Time) string { return fmt.Sprintf("%d.%06d", t.Unix(), t.Nanosecond()/1000) }

// TestSnoozeAtStartSurvivesSIGKILL: Bob clicks "Remind me at start" on the
// team's reminder in #eng; the click is answered within 3 s with the
// start as a <!date> token, and again, unchanged, on a double click; the
// bot is killed and started again before the start; Bob alone gets one DM,
// at the start, within a second, and his Home tab listed the snooze
// meanwhile.
func TestSnoozeAtStartSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.snoozeEnv()
	p1 := start(t, w.dir, env)
	addr := p1.ready()

	begins := at(16 * time.Second)
	w.meetingIn(t, team, "review", "Design review", begins)
	m := w.waitMessage(t, "Design review", 20*time.Second)
	if m.Channel != engID {
		t.Fatalf("reminder in %s, want %s", m.Channel, engID)
	}
	value := buttonValue(m, action.SnoozeStart)
	if value == "" {
		t.Fatalf("reminder without Remind me at start: %s", m.Blocks)
	}
	if v := buttonValue(m, action.Snooze5m); v != "" {
		t.Errorf("a reminder 10 s ahead carries In 5 min: %s", v)
	}
	first := w.slack.ResponseURL()
	click(t, addr, clickBody(m, engID, action.SnoozeStart, value, stamp(time.Now()), first))
	w.answered(t, first, fmt.Sprintf("I'll remind you at <!date^%d^", begins.Unix()))
	second := w.slack.ResponseURL()
	click(t, addr, clickBody(m, engID, action.SnoozeStart, value, stamp(time.Now()), second))
	w.answered(t, second, fmt.Sprintf("Already set: I'll remind you at <!date^%d^", begins.Unix()))

	p1.signal(syscall.SIGKILL)
	p1.wait(10 * time.Second)
	p2 := start(t, w.dir, env)
	addr = p2.ready()
	sendEvent(t, addr, "Ev0BOBSNZ01", map[string]any{"type": "app_home_opened", "user": bobID, "channel": bobDM, "tab": "home", "event_ts": "1515449522000016"})
	eventually(t, 10*time.Second, "Bob's Home tab listing the snooze", func() bool {
		v, _ := w.slack.HomeView(bobID)
		return strings.Contains(string(v.Blocks), "Reminders you asked for") && strings.Contains(string(v.Blocks), `"snooze_cancel"`)
	})
	if time.Now().After(begins) {
		t.Fatalf("the restart took until after the start (%v)", begins)
	}
	eventually(t, 2*time.Second, "GET /metrics counting the stored snooze pending after the restart", func() bool {
		_, metrics := httpGet("http://" + addr + "/metrics")
		return strings.Contains(metrics, "meetingbot_timers_pending 1\n")
	})

	sleepUntil(begins.Add(3 * time.Second))
	dms := w.snoozeDMs()
	if len(dms) != 1 {
		t.Fatalf("snooze DMs = %d, want 1: %+v", len(dms), dms)
	}
	got := dms[0]
	if got.Channel != bobDM || !strings.Contains(got.Text, "Design review") {
		t.Errorf("snooze DM in %s saying %q, want in %s of Design review", got.Channel, got.Text, bobDM)
	}
	if got.Posted.Before(begins) || got.Posted.After(begins.Add(time.Second)) {
		t.Errorf("snooze DM posted at %v, want within a second of the start %v", got.Posted.Format("15:04:05.000"), begins.Format("15:04:05"))
	}
	if n := len(w.inChannel(engID)); n != 1 {
		t.Errorf("messages in #eng = %d, want the one reminder: a snooze goes to the person who clicked", n)
	}
	// The timers' metrics, on the built binary: the snooze fired, sent
	// on time, and none is pending after the next pass (within a tick).
	eventually(t, 5*time.Second, "GET /metrics counting the snooze sent and none pending", func() bool {
		_, metrics := httpGet("http://" + addr + "/metrics")
		return strings.Contains(metrics, `meetingbot_timers_fired_total{kind="snooze",outcome="sent"} 1`+"\n") &&
			strings.Contains(metrics, "meetingbot_timers_pending 0\n")
	})

	// bot audit, beside the running bot, reports the snooze due and
	// delivered once, like a reminder.
	var report struct {
		Subscriptions []struct {
			Subscription string            `json:"subscription"`
			Expected     int               `json:"expected"`
			Delivered    []json.RawMessage `json:"delivered"`
		} `json:"subscriptions"`
	}
	auditReport(t, w.dir, env, &report)
	found := false
	for _, sr := range report.Subscriptions {
		if sr.Subscription == meetingbot.SnoozeSubscription(bobID) {
			found = true
			if sr.Expected != 1 || len(sr.Delivered) != 1 {
				t.Errorf("bot audit of Bob's snoozes: %d expected, %d delivered; want 1 and 1", sr.Expected, len(sr.Delivered))
			}
		}
	}
	if !found {
		t.Errorf("bot audit reports no snoozes of Bob: %+v", report.Subscriptions)
	}
}

// homeOpens numbers the app_home_opened events the tests send, each with
// an event ID of its own.
var homeOpens atomic.Int64

// homeSnoozes opens Bob's Home tab and returns the snoozes it lists, by
// meeting title: the instant each names and its Cancel button's value. It
// reads the Home tab published in answer to its own app_home_opened, not
// an earlier one: the bot answers Slack's event at once and publishes
// after, so a caller that went on sooner would leave a publish in flight,
// which could land after, and over, a later answer to a click.
func (w *world) homeSnoozes(t *testing.T, addr string) map[string]struct {
	at  int64
	key string
} {
	t.Helper()
	before := len(w.homeViews(bobID))
	n := homeOpens.Add(1)
	sendEvent(t, addr, fmt.Sprintf("Ev0BOBHOME%04d", n), map[string]any{"type": "app_home_opened", "user": bobID, "channel": bobDM,
		"tab": "home", "event_ts": fmt.Sprintf("1515449522.%06d", n)})
	out := map[string]struct {
		at  int64
		key string
	}{}
	eventually(t, 10*time.Second, "Bob's Home tab", func() bool {
		views := w.homeViews(bobID)
		if len(views) <= before {
			return false
		}
		v := views[len(views)-1]
		var blocks []struct {
			Text      struct{ Text string } `json:"text"`
			Accessory struct {
				ActionID string `json:"action_id"`
				Value    string `json:"value"`
			} `json:"accessory"`
		}
		_ = json.Unmarshal(v.Blocks, &blocks)
		clear(out)
		for _, b := range blocks {
			title, rest, ok := strings.Cut(strings.TrimPrefix(b.Text.Text, "*"), "* at <!date^")
			if !ok || b.Accessory.ActionID != "snooze_cancel" {
				continue
			}
			var unix int64
			fmt.Sscanf(rest, "%d^", &unix)
			out[title] = struct {
				at  int64
				key string
			}{unix, b.Accessory.Value}
		}
		return len(v.Blocks) > 0
	})
	return out
}

// homeViews returns the Home tabs published for user, oldest first.
func (w *world) homeViews(user string) []slacktest.View {
	var out []slacktest.View
	for _, v := range w.slack.HomeViews() {
		if v.User == user {
			out = append(out, v)
		}
	}
	return out
}

// TestSnoozeFollowsItsMeeting: Bob clicks "Remind me at start" on the
// reminders of four meetings in #eng. One is cancelled and one declined
// (nothing comes), one he cancels from the Home tab (nothing comes), and
// one moves earlier: the Home tab shows its new start, a click on the
// moved meeting's reminder finds that snooze ("Already set"), and its one
// DM comes at the new start, within a second.
func TestSnoozeFollowsItsMeeting(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := start(t, w.dir, w.snoozeEnv("REMINDER_OFFSETS=20s,10s"))
	addr := p.ready()

	begins := at(30 * time.Second)
	meetings := []struct{ id, title string }{{"dropped", "Dropped sync"}, {"declined", "Declined sync"}, {"kept", "Kept sync"}, {"moved", "Moved sync"}}
	for _, m := range meetings {
		w.meetingIn(t, team, m.id, m.title, begins)
	}
	for _, m := range meetings {
		msg := w.waitMessage(t, m.title, 30*time.Second)
		resp := w.slack.ResponseURL()
		click(t, addr, clickBody(msg, engID, action.SnoozeStart, buttonValue(msg, action.SnoozeStart), stamp(time.Now()), resp))
		w.answered(t, resp, fmt.Sprintf("I'll remind you at <!date^%d^", begins.Unix()))
	}
	if err := w.cal.Delete(team, "dropped"); err != nil {
		t.Fatal(err)
	}
	declined := calendartest.NewEvent("declined", "Declined sync", begins, begins.Add(30*time.Minute))
	declined.Attendees = []*gcal.EventAttendee{{Email: team, Self: true, ResponseStatus: "declined"}}
	if err := w.cal.Put(team, declined); err != nil {
		t.Fatal(err)
	}
	moved := begins.Add(-8 * time.Second)
	if time.Until(moved) < 4*time.Second {
		t.Fatalf("the clicks took until %v, too close to the new start %v", time.Now().Format("15:04:05.000"), moved.Format("15:04:05"))
	}
	w.meetingIn(t, team, "moved", "Moved sync", moved)

	// The Home tab shows the new start as soon as the bot has seen the
	// move, long before the old one.
	var home map[string]struct {
		at  int64
		key string
	}
	eventually(t, 5*time.Second, "the Home tab listing Moved sync at its new start", func() bool {
		home = w.homeSnoozes(t, addr)
		return home["Moved sync"].at == moved.Unix()
	})
	// The moved meeting's reminder (of its new start): its button finds
	// the moved snooze.
	var again slacktest.Message
	eventually(t, 5*time.Second, "a reminder of Moved sync at its new start", func() bool {
		for _, m := range w.messages("Moved sync") {
			if v, ok := action.ParseSnooze(buttonValue(m, action.SnoozeStart)); ok && v.Start == moved.Unix() {
				again = m
				return true
			}
		}
		return false
	})
	resp := w.slack.ResponseURL()
	click(t, addr, clickBody(again, engID, action.SnoozeStart, buttonValue(again, action.SnoozeStart), stamp(time.Now()), resp))
	w.answered(t, resp, fmt.Sprintf("Already set: I'll remind you at <!date^%d^", moved.Unix()))

	payload, _ := json.Marshal(map[string]any{
		"type": "block_actions", "user": map[string]any{"id": bobID, "username": "bob", "team_id": slacktest.TeamID},
		"api_app_id": slacktest.AppID, "team": map[string]any{"id": slacktest.TeamID, "domain": "example"},
		"container": map[string]any{"type": "view", "view_id": "V0BOB00001"},
		"actions":   []any{map[string]any{"action_id": "snooze_cancel", "block_id": "x", "type": "button", "value": home["Kept sync"].key, "action_ts": stamp(time.Now())}},
	})
	published := len(w.homeViews(bobID))
	click(t, addr, []byte(url.Values{"payload": {string(payload)}}.Encode()))
	// The Home tab the click publishes says so; one published after it
	// (for a click before it, answered later) may drop the notice, but
	// none lists the snooze again.
	eventually(t, 10*time.Second, "the Home tab saying it is cancelled", func() bool {
		for _, v := range w.homeViews(bobID)[published:] {
			if strings.Contains(string(v.Blocks), "Cancelled: no reminder of *Kept sync*") {
				return true
			}
		}
		return false
	})
	if v, _ := w.slack.HomeView(bobID); strings.Contains(string(v.Blocks), home["Kept sync"].key) {
		t.Errorf("the Home tab lists the cancelled snooze of Kept sync again: %s", v.Blocks)
	}

	sleepUntil(begins.Add(3 * time.Second))
	dms := w.snoozeDMs()
	if len(dms) != 1 {
		t.Fatalf("snooze DMs = %d, want 1, of Moved sync: %+v", len(dms), dms)
	}
	got := dms[0]
	if got.Channel != bobDM || !strings.Contains(got.Text, "Moved sync") {
		t.Errorf("snooze DM in %s saying %q, want in %s of Moved sync", got.Channel, got.Text, bobDM)
	}
	if got.Posted.Before(moved) || got.Posted.After(moved.Add(time.Second)) {
		t.Errorf("snooze DM posted at %v, want within a second of the new start %v (the old one was %v)",
			got.Posted.Format("15:04:05.000"), moved.Format("15:04:05"), begins.Format("15:04:05"))
	}
}

// TestSnoozeHandedOverBetweenReplicas: two bots on one PostgreSQL; Slack's
// click reaches both (its retry to another replica), which make one timer;
// the one that answered first is killed, and the other sends the one DM at
// the start.
func TestSnoozeHandedOverBetweenReplicas(t *testing.T) {
	t.Parallel()
	pgtest.Server(t)
	w := newWorld(t)
	dbURL := pgtest.URL(t)
	env := w.snoozeEnv()
	delete(env, "DATABASE_PATH")
	env["DATABASE_URL"] = dbURL
	a := start(t, w.dir, env)
	addrA := a.ready()
	b := start(t, w.dir, env)
	addrB := b.ready()

	begins := at(16 * time.Second)
	w.meetingIn(t, team, "handover", "Handover review", begins)
	m := w.waitMessage(t, "Handover review", 20*time.Second)
	resp := w.slack.ResponseURL()
	body := clickBody(m, engID, action.SnoozeStart, buttonValue(m, action.SnoozeStart), stamp(time.Now()), resp)
	click(t, addrA, body)
	time.Sleep(1100 * time.Millisecond) // Slack signs its retry anew, at its own time
	click(t, addrB, body)               // Slack's retry, to the other replica
	w.answered(t, resp, "I'll remind you at")
	w.answered(t, resp, "Already set: I'll remind you at")

	a.signal(syscall.SIGKILL)
	a.wait(10 * time.Second)
	sleepUntil(begins.Add(3 * time.Second))
	dms := w.snoozeDMs()
	if len(dms) != 1 {
		t.Fatalf("snooze DMs = %d, want 1", len(dms))
	}
	if got := dms[0]; got.Channel != bobDM || got.Posted.Before(begins) || got.Posted.After(begins.Add(time.Second)) {
		t.Errorf("snooze DM in %s at %v, want in %s within a second of %v", got.Channel, got.Posted.Format("15:04:05.000"), bobDM, begins.Format("15:04:05"))
	}
}
