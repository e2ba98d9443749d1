package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	gcal "google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/notify/action"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// End-to-end tests of self-service from Slack: the bot binary with
// SLACK_SIGNING_SECRET (or SLACK_APP_TOKEN), CALENDARS empty, and the
// tests acting as Slack: slash commands, button clicks and events signed
// as Slack signs them, to the bot's own request URLs.

// signingSecret is the tests' SLACK_SIGNING_SECRET, 32 hex digits as
// Slack's are.
const signingSecret = "8f742231b10e8888abcd99edabd85ea5"

// People of the self-service tests: Bob, a member whose calendar is his
// email; Lisa, listed in SLACK_ADMINS.
const (
	bob    = "bob@example.com"
	bobID  = "U0BOB00001"
	bobDM  = "D0BOB00001"
	lisaID = "U0LISA0001"
)

// selfServiceEnv is w's environment with self-service over request URLs,
// no CALENDARS, and overrides.
func (w *world) selfServiceEnv(overrides ...string) map[string]string {
	w.slack.AddUser(slacktest.User{ID: bobID, Name: "bob", Email: bob})
	w.slack.AddUser(slacktest.User{ID: lisaID, Name: "lisa", Email: "lisa@example.com"})
	w.cal.AddCalendar(bob)
	return w.env(append([]string{"CALENDARS=", "SLACK_SIGNING_SECRET=" + signingSecret, "SLACK_ADMINS=" + lisaID}, overrides...)...)
}

// slash types "/meetingbot text" as user in channel (a DM when channel
// starts with D) and returns the reply only they see.
func (w *world) slash(t *testing.T, addr, user, channel, text string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	name := "directmessage"
	if channel == engID {
		name = "eng"
	}
	reply, err := w.slack.Type(ctx, addr, signingSecret, user, strings.ToLower(user), channel, name, text)
	if err != nil {
		t.Fatal(err)
	}
	return reply
}

// sendEvent posts an Events API callback with inner event ev to the bot
// at addr, signed as Slack does, and expects the 200 that acknowledges it.
func sendEvent(t *testing.T, addr, eventID string, ev map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"token": "XXYYZZ", "team_id": slacktest.TeamID, "api_app_id": slacktest.AppID, "event": ev,
		"type": "event_callback", "event_id": eventID, "event_time": time.Now().Unix(),
	})
	status, answer, err := slacktest.PostSigned(context.Background(), "http://"+addr+"/slack/events", "application/json", body, signingSecret)
	if err != nil {
		t.Fatalf("POST /slack/events: %v", err)
	}
	if status != http.StatusOK {
		t.Fatalf("POST /slack/events = %d %s, want 200", status, answer)
	}
}

// seriesEvent is an instance, id, of the recurring series "weekly".
func seriesEvent(id, title string, start time.Time) *gcal.Event {
	ev := calendartest.NewEvent(id, title, start, start.Add(30*time.Minute))
	ev.RecurringEventId = "weekly"
	return ev
}

// inChannel returns the messages posted in a channel.
func (w *world) inChannel(channel string) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range w.slack.Messages() {
		if m.Channel == channel {
			out = append(out, m)
		}
	}
	return out
}

// muteButton returns the value of a reminder's "Mute this series" button,
// "" when it has none.
func muteButton(m slacktest.Message) string {
	var blocks []struct {
		Elements []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"elements"`
	}
	_ = json.Unmarshal(m.Blocks, &blocks)
	for _, b := range blocks {
		for _, e := range b.Elements {
			if e.ActionID == action.MuteSeries {
				return e.Value
			}
		}
	}
	return ""
}

// TestSlashCommandOnThenRemindedOffThenNot: Bob, in no configuration,
// types /meetingbot on and gets his meeting's reminder by DM between its
// trigger and its start; a reply to it gets a help answer; after
// /meetingbot off his next meeting gets nothing, and /healthz stays 200.
func TestSlashCommandOnThenRemindedOffThenNot(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := start(t, w.dir, w.selfServiceEnv("REMINDER_OFFSETS=5s"))
	addr := p.ready()

	begins := at(12 * time.Second)
	w.meetingIn(t, bob, "standup", "Bob's standup", begins)
	reply := w.slash(t, addr, bobID, bobDM, "on")
	if !strings.HasPrefix(reply, "On. Next reminder: *Bob's standup* at <!date^") || !strings.Contains(reply, "I DM you 5s before each meeting") {
		t.Errorf("/meetingbot on = %q, want On and the next reminder", reply)
	}
	m := w.waitMessage(t, "Bob's standup", 30*time.Second)
	if trigger := begins.Add(-5 * time.Second); m.Channel != bobDM || m.Posted.Before(trigger) || !m.Posted.Before(begins) {
		t.Errorf("reminder in %s at %v, want in %s in [%v, %v)", m.Channel, m.Posted, bobDM, trigger, begins)
	}

	// Bob answers the reminder in the DM.
	sendEvent(t, addr, "Ev0BOBREPLY1", map[string]any{
		"type": "message", "channel": bobDM, "user": bobID, "text": "thanks!", "ts": "1355517523.000005",
		"event_ts": "1355517523.000005", "channel_type": "im",
	})
	eventually(t, 10*time.Second, "a help answer in Bob's DM", func() bool { return len(w.inChannel(bobDM)) == 2 })
	if help := w.inChannel(bobDM)[1].Text; !strings.Contains(help, "5s before each meeting on bob@example.com") || !strings.Contains(help, "`/meetingbot off`") {
		t.Errorf("answer to Bob's reply = %q, want his calendar and how to stop", help)
	}

	if reply := w.slash(t, addr, bobID, bobDM, "off"); !strings.HasPrefix(reply, "Off.") {
		t.Errorf("/meetingbot off = %q, want Off.", reply)
	}
	next := at(10 * time.Second)
	w.meetingIn(t, bob, "retro", "Bob's retro", next)
	sleepUntil(next.Add(2 * time.Second))
	if got := w.messages("Bob's retro"); len(got) != 0 {
		t.Errorf("reminders of a meeting after /meetingbot off = %d, want 0", len(got))
	}
	if status, body := httpGet("http://" + addr + "/healthz"); status != http.StatusOK {
		t.Errorf("GET /healthz after /meetingbot off = %d %q, want 200", status, body)
	}
}

// TestSlackSubscriptionSurvivesSIGKILL: a subscription made with /meetingbot
// on is in the database: the bot killed and started again reminds Bob
// without anyone typing anything.
func TestSlackSubscriptionSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.selfServiceEnv("REMINDER_OFFSETS=5s")
	p1 := start(t, w.dir, env)
	addr := p1.ready()
	if reply := w.slash(t, addr, bobID, bobDM, "on"); !strings.HasPrefix(reply, "On.") {
		t.Fatalf("/meetingbot on = %q, want On.", reply)
	}
	p1.signal(syscall.SIGKILL)
	p1.wait(10 * time.Second)

	p2 := start(t, w.dir, env)
	p2.ready()
	begins := at(10 * time.Second)
	w.meetingIn(t, bob, "after", "After the restart", begins)
	m := w.waitMessage(t, "After the restart", 30*time.Second)
	if m.Channel != bobDM || !m.Posted.Before(begins) {
		t.Errorf("reminder after the restart in %s at %v, want in %s before %v", m.Channel, m.Posted, bobDM, begins)
	}
}

// TestSubscribeInAChannelNeedsTheRight: Bob may not post the team
// calendar in #eng (nothing is stored, nothing posted), Lisa, in
// SLACK_ADMINS, may; a calendar the bot cannot read is refused with how to
// share it.
func TestSubscribeInAChannelNeedsTheRight(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.cal.Share("secret@example.com", "someone-else@example.com") // not shared with the bot
	env := w.selfServiceEnv("REMINDER_OFFSETS=5s")
	p := start(t, w.dir, env)
	addr := p.ready()

	refused := w.slash(t, addr, bobID, engID, "subscribe "+team)
	if !strings.HasPrefix(refused, "Only the calendar's owner, workspace admins and owners, and the people in SLACK_ADMINS may post a calendar in a channel") {
		t.Errorf("/meetingbot subscribe %s by Bob = %q, want a refusal with the reason", team, refused)
	}
	unreadable := w.slash(t, addr, lisaID, engID, "subscribe secret@example.com")
	if want := "Share it with me: in Google Calendar open Settings > *secret@example.com* > Share with specific people, add `" + w.cal.ServiceAccountEmail() + "` with *See all event details*"; !strings.Contains(unreadable, want) {
		t.Errorf("/meetingbot subscribe of an unshared calendar = %q, want %q", unreadable, want)
	}
	begins := at(12 * time.Second)
	w.meetingIn(t, team, "allhands", "All hands", begins)
	if reply := w.slash(t, addr, lisaID, engID, "subscribe "+team); !strings.HasPrefix(reply, "Subscribed: I'll post the reminders of team@example.com in this channel") {
		t.Errorf("/meetingbot subscribe %s by Lisa = %q, want Subscribed", team, reply)
	}
	m := w.waitMessage(t, "All hands", 30*time.Second)
	if m.Channel != engID {
		t.Errorf("reminder of the team calendar in %s, want #eng (%s)", m.Channel, engID)
	}
	p.signal(syscall.SIGTERM)
	p.wait(15 * time.Second)

	s, err := sqlite.Open(context.Background(), env["DATABASE_PATH"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	subs, err := s.SlackSubscriptions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(subs) != 1 || subs[0].CreatedBy != lisaID || subs[0].CalendarID != team {
		t.Errorf("subscriptions stored = %+v, want Lisa's of %s alone", subs, team)
	}
}

// TestAppHomeAndMuteThisSeries: opening the Home tab publishes it with
// Bob's settings; a reminder of a recurring meeting carries "Mute this
// series", and after a click the next meeting of the series gets nothing
// while another meeting still does. Unsigned requests change nothing.
func TestAppHomeAndMuteThisSeries(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := start(t, w.dir, w.selfServiceEnv("REMINDER_OFFSETS=5s"))
	addr := p.ready()

	unsigned, err := http.Post("http://"+addr+"/slack/commands", "application/x-www-form-urlencoded",
		strings.NewReader(slacktest.SlashCommand(bobID, "bob", bobDM, "directmessage", "on", w.slack.ResponseURL()).Encode()))
	if err != nil {
		t.Fatal(err)
	}
	unsigned.Body.Close()
	if unsigned.StatusCode != http.StatusUnauthorized {
		t.Errorf("unsigned POST /slack/commands = %d, want 401", unsigned.StatusCode)
	}

	sendEvent(t, addr, "Ev0BOBHOME1", map[string]any{"type": "app_home_opened", "user": bobID, "channel": bobDM, "tab": "home", "event_ts": "1515449522000016"})
	eventually(t, 10*time.Second, "Bob's Home tab", func() bool { _, ok := w.slack.HomeView(bobID); return ok })
	if v, _ := w.slack.HomeView(bobID); !strings.Contains(string(v.Blocks), "*Reminders: off.*") {
		t.Errorf("Home tab before /meetingbot on = %s, want Reminders: off", v.Blocks)
	}

	first := at(12 * time.Second)
	weekly := func(id string, start time.Time) {
		if err := w.cal.Put(bob, seriesEvent(id, "Weekly 1:1", start)); err != nil {
			t.Fatal(err)
		}
	}
	weekly("weekly_1", first)
	if reply := w.slash(t, addr, bobID, bobDM, "on"); !strings.HasPrefix(reply, "On.") {
		t.Fatalf("/meetingbot on = %q", reply)
	}
	sendEvent(t, addr, "Ev0BOBHOME2", map[string]any{"type": "app_home_opened", "user": bobID, "channel": bobDM, "tab": "home", "event_ts": "1515449523000016"})
	eventually(t, 10*time.Second, "Bob's Home tab published again, on", func() bool {
		v, _ := w.slack.HomeView(bobID)
		return strings.Contains(string(v.Blocks), "*Reminders: on.*")
	})

	m := w.waitMessage(t, "Weekly 1:1", 30*time.Second)
	value := muteButton(m)
	if value == "" {
		t.Fatalf("reminder of a recurring meeting has no Mute this series button: %s", m.Blocks)
	}
	respURL := w.slack.ResponseURL()
	payload, _ := json.Marshal(map[string]any{
		"type": "block_actions", "user": map[string]any{"id": bobID, "username": "bob", "name": "bob", "team_id": slacktest.TeamID},
		"api_app_id": slacktest.AppID, "token": "9s8d9as89d8as9d8as989",
		"container":  map[string]any{"type": "message", "message_ts": m.TS, "channel_id": bobDM, "is_ephemeral": false},
		"trigger_id": "12321423423.333649436676.d8c1bb837935619ccad0f624c448ffb3",
		"team":       map[string]any{"id": slacktest.TeamID, "domain": "example"},
		"channel":    map[string]any{"id": bobDM, "name": "directmessage"},
		"message":    map[string]any{"bot_id": slacktest.BotID, "type": "message", "text": m.Text, "user": slacktest.BotUserID, "ts": m.TS},
		"state":      map[string]any{"values": map[string]any{}}, "response_url": respURL,
		"actions": []any{map[string]any{
			"action_id": action.MuteSeries, "block_id": "reminder_actions", "type": "button", "value": value,
			"text": map[string]any{"type": "plain_text", "text": "Mute this series", "emoji": true}, "action_ts": "1548426417.840180",
		}},
	})
	body := []byte(url.Values{"payload": {string(payload)}}.Encode())
	if status, answer, err := slacktest.PostSigned(context.Background(), "http://"+addr+"/slack/interactivity", "application/x-www-form-urlencoded", body, signingSecret); err != nil || status != http.StatusOK {
		t.Fatalf("POST /slack/interactivity = %d %s %v, want 200", status, answer, err)
	}
	eventually(t, 10*time.Second, "the answer to the click", func() bool {
		for _, r := range w.slack.Responses() {
			if r.URL == respURL && strings.HasPrefix(r.Text, "Muted *Weekly 1:1* in your DMs") {
				return true
			}
		}
		return false
	})

	second := at(10 * time.Second)
	weekly("weekly_2", second)
	w.meetingIn(t, bob, "single", "One-off", second)
	w.waitMessage(t, "One-off", 30*time.Second)
	sleepUntil(second.Add(time.Second))
	if got := len(w.messages("Weekly 1:1")); got != 1 {
		t.Errorf("reminders of the muted series = %d, want 1 (before the click)", got)
	}
}

// TestSelfServiceOverSocketMode: with SLACK_APP_TOKEN and no signing
// secret, the bot connects to Slack itself; a slash command over the
// socket is answered in its ack and Bob is reminded; no request URL is
// served.
func TestSelfServiceOverSocketMode(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.selfServiceEnv("REMINDER_OFFSETS=5s", "SLACK_SIGNING_SECRET=", "SLACK_APP_TOKEN="+slacktest.AppToken)
	p := start(t, w.dir, env)
	addr := p.ready()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.slack.WaitSocket(ctx, 1); err != nil {
		t.Fatalf("the bot did not connect over Socket Mode: %v", err)
	}

	begins := at(12 * time.Second)
	w.meetingIn(t, bob, "standup", "Socket standup", begins)
	cmd := slacktest.SlashCommand(bobID, "bob", bobDM, "directmessage", "on", w.slack.ResponseURL())
	payload := map[string]any{}
	for k := range cmd {
		payload[k] = cmd.Get(k)
	}
	id, err := w.slack.SendEnvelope(slacktest.Envelope{Type: "slash_commands", Payload: payload, AcceptsResponsePayload: true})
	if err != nil {
		t.Fatal(err)
	}
	ack, err := w.slack.WaitAck(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var reply struct{ Text string }
	if json.Unmarshal(ack.Payload, &reply) != nil || !strings.HasPrefix(reply.Text, "On. Next reminder: *Socket standup*") {
		t.Errorf("ack of /meetingbot on = %s, want the reply", ack.Payload)
	}
	m := w.waitMessage(t, "Socket standup", 30*time.Second)
	if m.Channel != bobDM || !m.Posted.Before(begins) {
		t.Errorf("reminder in %s at %v, want in %s before %v", m.Channel, m.Posted, bobDM, begins)
	}
	if status, _ := httpGet("http://" + addr + "/slack/commands"); status != http.StatusNotFound {
		t.Errorf("GET /slack/commands without SLACK_SIGNING_SECRET = %d, want 404", status)
	}
	p.signal(syscall.SIGTERM)
	if code, took := p.wait(15 * time.Second); code != 0 || took > 10*time.Second {
		t.Errorf("after SIGTERM: exit %d after %v, want 0 within 10s", code, took)
	}
	if line := logLine(p.out.String(), `"level":"ERROR"`); line != "" {
		t.Errorf("a clean stop with Socket Mode logged an error: %s", line)
	}
}
