package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
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

// End-to-end tests of answering invitations from Slack, on the built
// binary with people's own Google accounts (connect_e2e_test.go): Bob's
// reminder of Lisa's meeting carries Going / Maybe / No, a click answers
// with his own account, and with notices on each new invitation gets one
// DM. Lisa's calendar is lisa, as in the connect tests.

// invitation puts Lisa's meeting id on her calendar and on Bob's, Bob
// and Carol invited, made now (its updated).
func (w *world) invitation(t *testing.T, id, title string, start time.Time, recurrence ...string) {
	t.Helper()
	w.cal.AddCalendar(lisa)
	for _, owner := range []string{lisa, bob} {
		ev := calendartest.NewEvent(id, title, start, start.Add(30*time.Minute))
		ev.Recurrence = recurrence
		ev.Updated = time.Now().UTC().Format(time.RFC3339Nano)
		ev.Organizer = &gcal.EventOrganizer{Email: lisa, DisplayName: "Lisa", Self: owner == lisa}
		ev.Attendees = []*gcal.EventAttendee{
			{Email: lisa, Organizer: true, ResponseStatus: "accepted", Self: owner == lisa},
			{Email: bob, ResponseStatus: "needsAction", Self: owner == bob},
			{Email: "carol@example.com", ResponseStatus: "tentative"},
		}
		if err := w.cal.Put(owner, ev); err != nil {
			t.Fatal(err)
		}
	}
}

// answerClick is the signed body of Bob's click on m's answer control, as
// Slack posts a block_actions payload: the message with its blocks, the
// action (a button, or a digest line's menu with its option chosen).
func answerClick(m slacktest.Message, action map[string]any, respURL string) []byte {
	act := map[string]any{"action_ts": stamp(time.Now())}
	for k, v := range action {
		act[k] = v
	}
	payload, _ := json.Marshal(map[string]any{
		"type": "block_actions", "user": map[string]any{"id": bobID, "username": "bob", "name": "bob", "team_id": slacktest.TeamID},
		"api_app_id": slacktest.AppID, "token": "9s8d9as89d8as9d8as989",
		"container":  map[string]any{"type": "message", "message_ts": m.TS, "channel_id": m.Channel, "is_ephemeral": false},
		"trigger_id": "12321423423.333649436676.d8c1bb837935619ccad0f624c448ffb3",
		"team":       map[string]any{"id": slacktest.TeamID, "domain": "example"},
		"channel":    map[string]any{"id": m.Channel, "name": "directmessage"},
		"message":    map[string]any{"bot_id": slacktest.BotID, "type": "message", "text": m.Text, "user": slacktest.BotUserID, "ts": m.TS, "blocks": json.RawMessage(m.Blocks)},
		"state":      map[string]any{"values": map[string]any{}}, "response_url": respURL,
		"actions": []any{act},
	})
	return []byte(url.Values{"payload": {string(payload)}}.Encode())
}

// clickAnswer clicks the answer button actionID of m as Bob and returns
// the answer he is told.
func (w *world) clickAnswer(t *testing.T, addr string, m slacktest.Message, actionID string) string {
	t.Helper()
	resp := w.slack.ResponseURL()
	click(t, addr, answerClick(m, map[string]any{"action_id": actionID, "block_id": action.RSVPBlock, "type": "button",
		"value": buttonValue(m, actionID), "text": map[string]any{"type": "plain_text", "text": "No"}}, resp))
	return w.response(t, resp)
}

// response waits for the ephemeral answer on resp and returns it.
func (w *world) response(t *testing.T, resp string) string {
	t.Helper()
	var got string
	eventually(t, 30*time.Second, "the answer on the response_url", func() bool {
		for _, r := range w.slack.Responses() {
			if r.URL == resp && r.ResponseType == "ephemeral" {
				got = r.Text
				return true
			}
		}
		return false
	})
	return got
}

// message returns the message at ts as Slack holds it now.
func (w *world) message(ts string) slacktest.Message {
	for _, m := range w.slack.Messages() {
		if m.TS == ts {
			return m
		}
	}
	return slacktest.Message{}
}

// TestAnswerFromAReminder: Bob, connected with a read-only grant, gets
// the reminder of Lisa's meeting with his answer and Going / Maybe / No;
// his first No is answered, within Slack's 3 s, with the link that lets
// the bot change his answers; after it, No declines: the calendar sees
// his own answer change and nothing else, his reminder says "You
// declined", and the meeting's next reminder does not go out. When
// Google then revokes his grant, a click tells him to reconnect.
func TestAnswerFromAReminder(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	addr := freeAddr(t)
	front := httpsFront(t, addr)
	p := start(t, w.dir, w.connectEnv(front, addr, "REMINDER_OFFSETS=40s,10s"))
	p.ready()
	status, page := browse(t, front, w.slash(t, addr, bobID, bobDM, "connect"))
	if status != http.StatusOK || !strings.Contains(page, "Connected bob@example.com") {
		t.Fatalf("the flow ended with %d:\n%s", status, page)
	}

	begins := at(50 * time.Second)
	w.invitation(t, "review", "Design review", begins)
	if reply := w.slash(t, addr, bobID, bobDM, "on"); !strings.HasPrefix(reply, "On.") {
		t.Fatalf("/meetingbot on = %q", reply)
	}
	first := w.waitMessage(t, "Design review", 30*time.Second)
	if first.Channel != bobDM || buttonValue(first, action.RSVPNo) == "" || !strings.Contains(string(first.Blocks), "You haven't answered this invitation yet.") {
		t.Fatalf("reminder in %s: %s; want Bob's DM with his answer and the answer buttons", first.Channel, first.Blocks)
	}

	answer := w.clickAnswer(t, addr, first, action.RSVPNo)
	if !strings.Contains(answer, "Allow answering from Slack") {
		t.Fatalf("No with a read-only grant = %q, want the link that allows it", answer)
	}
	if n := len(w.cal.Writes()); n != 0 {
		t.Fatalf("%d writes before Bob allowed answering", n)
	}
	if status, page := browse(t, front, answer); status != http.StatusOK || !strings.Contains(page, "Connected bob@example.com") {
		t.Fatalf("allowing answers ended with %d:\n%s", status, page)
	}

	answer = w.clickAnswer(t, addr, w.message(first.TS), action.RSVPNo)
	if !strings.HasPrefix(answer, "You declined *Design review*") {
		t.Fatalf("No = %q, want declined", answer)
	}
	writes := w.cal.Writes()
	if len(writes) != 1 || writes[0].By != bob || writes[0].Calendar != bob || writes[0].SendUpdates != "all" || writes[0].IfMatch == "" ||
		!slices.Equal(writes[0].Changes, []string{"attendees[bob@example.com].responseStatus: needsAction -> declined"}) {
		t.Fatalf("Writes() = %+v, want Bob's own answer alone, with the event's etag", writes)
	}
	eventually(t, 15*time.Second, "Bob's reminder saying he declined", func() bool {
		b := string(w.message(first.TS).Blocks)
		return strings.Contains(b, "*You declined*") && strings.Contains(b, "~starts in 40 seconds~")
	})
	if b := string(w.message(first.TS).Blocks); strings.Contains(b, "Cancelled") {
		t.Errorf("Bob's reminder says Cancelled: %s", b)
	}
	sleepUntil(begins.Add(time.Second))
	if got := w.messages("Design review"); len(got) != 1 {
		t.Errorf("reminders of the declined meeting = %d, want the first alone", len(got))
	}

	// Google revokes Bob's grant: a click tells him to reconnect.
	w.cal.RevokeGrants(bob)
	answer = w.clickAnswer(t, addr, w.message(first.TS), action.RSVPGoing)
	if !strings.Contains(answer, "Reconnect") || !startLink.MatchString(answer) {
		t.Errorf("Going after the grant was revoked = %q, want to reconnect, with a link", answer)
	}
	if n := len(w.cal.Writes()); n != 1 {
		t.Errorf("%d writes after the grant was revoked, want still 1", n)
	}
}

// connectForNotices turns Bob's notices on and connects his Google
// account, with the grant answering needs, through the link of the
// reply.
func (w *world) connectForNotices(t *testing.T, front *httptest.Server, addr string) {
	t.Helper()
	reply := w.slash(t, addr, bobID, bobDM, "invites on")
	if !strings.HasPrefix(reply, "Invitation notices on:") || !startLink.MatchString(reply) {
		t.Fatalf("/meetingbot invites on = %q, want on, with the link that connects Bob", reply)
	}
	if status, page := browse(t, front, reply); status != http.StatusOK || !strings.Contains(page, "Connected bob@example.com") {
		t.Fatalf("connecting for notices ended with %d:\n%s", status, page)
	}
}

// notices returns the messages in Bob's DM whose metadata names a notice,
// and the notices' keys they carry.
func (w *world) notices() (msgs []slacktest.Message, keys []string) {
	for _, m := range w.inChannel(bobDM) {
		if m.Metadata == nil || fmt.Sprint(m.Metadata.EventPayload["subscription"]) != meetingbot.InviteSubscription(bobID) {
			continue
		}
		msgs = append(msgs, m)
		if list, ok := m.Metadata.EventPayload["reminders"].([]any); ok {
			for _, item := range list {
				keys = append(keys, fmt.Sprint(item.(map[string]any)["key"]))
			}
			continue
		}
		keys = append(keys, fmt.Sprint(m.Metadata.EventPayload["key"]))
	}
	return msgs, keys
}

// TestInvitationNoticesOnceThroughARestart: with notices on, Lisa's
// invitation and her weekly series each get one DM, still one after a
// restart; six invitations made while the bot is down get one digest,
// whose menu answers one of them.
func TestInvitationNoticesOnceThroughARestart(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	addr := freeAddr(t)
	front := httpsFront(t, addr)
	env := w.connectEnv(front, addr)
	p := start(t, w.dir, env)
	p.ready()
	w.connectForNotices(t, front, addr)

	w.invitation(t, "sprint", "Sprint planning", at(2*time.Hour))
	w.invitation(t, "weekly", "Weekly sync", at(3*time.Hour), "RRULE:FREQ=WEEKLY;COUNT=4")
	eventually(t, 30*time.Second, "the notices of the invitation and the series", func() bool { _, keys := w.notices(); return len(keys) == 2 })
	msgs, _ := w.notices()
	var texts []string
	for _, m := range msgs {
		texts = append(texts, m.Text)
		if buttonValue(m, action.RSVPGoing) == "" || !strings.Contains(string(m.Blocks), `"open_event"`) {
			t.Errorf("notice %s has no answer buttons or no link to the event", m.Blocks)
		}
	}
	slices.Sort(texts)
	if !strings.HasPrefix(texts[0], "Lisa invited you: Sprint planning, <!date^") || !strings.HasPrefix(texts[1], "Lisa invited you: Weekly sync, <!date^") {
		t.Errorf("notices %q, want Lisa's two invitations", texts)
	}

	p.signal(syscall.SIGTERM)
	p.wait(15 * time.Second)
	var flood []string
	for i := range 6 {
		id := fmt.Sprintf("list%d", i)
		w.invitation(t, id, fmt.Sprintf("Lecture %d", i), at(time.Duration(4+i)*time.Hour))
		flood = append(flood, meetingbot.InviteKey(bobID, id))
	}
	p = start(t, w.dir, env)
	p.ready()
	eventually(t, 30*time.Second, "the digest of the invitations made while the bot was down", func() bool { _, keys := w.notices(); return len(keys) == 8 })
	time.Sleep(3 * time.Second) // three passes more: nothing twice
	msgs, keys := w.notices()
	if len(msgs) != 3 {
		t.Errorf("notice messages = %d, want 3: two notices and one digest", len(msgs))
	}
	counts := map[string]int{}
	for _, k := range keys {
		counts[k]++
	}
	for k, n := range counts {
		if n != 1 {
			t.Errorf("notices of %s = %d, want 1", k, n)
		}
	}
	for _, k := range flood {
		if counts[k] != 1 {
			t.Errorf("the digest has no notice of %s", k)
		}
	}

	digest := msgs[len(msgs)-1]
	var blocks []struct {
		BlockID   string `json:"block_id"`
		Accessory struct {
			ActionID string `json:"action_id"`
			Options  []struct {
				Text  struct{ Text string } `json:"text"`
				Value string                `json:"value"`
			} `json:"options"`
		} `json:"accessory"`
	}
	if err := json.Unmarshal(digest.Blocks, &blocks); err != nil || len(blocks) != 7 {
		t.Fatalf("digest blocks %s: %v", digest.Blocks, err)
	}
	line := blocks[1]
	going := line.Accessory.Options[0]
	resp := w.slack.ResponseURL()
	click(t, addr, answerClick(digest, map[string]any{"type": "static_select", "action_id": action.RSVPMenu, "block_id": line.BlockID,
		"selected_option": map[string]any{"text": map[string]any{"type": "plain_text", "text": going.Text.Text}, "value": going.Value}}, resp))
	if got := w.response(t, resp); !strings.HasPrefix(got, "Going to *Lecture 0*") {
		t.Errorf("Going from the digest = %q", got)
	}
	if writes := w.cal.Writes(); len(writes) != 1 || !slices.Equal(writes[0].Changes, []string{"attendees[bob@example.com].responseStatus: needsAction -> accepted"}) {
		t.Errorf("Writes() = %+v, want Bob's answer to Lecture 0 alone", writes)
	}

	// bot audit, beside the running bot, reports the notices due and
	// delivered once each.
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
		if sr.Subscription == meetingbot.InviteSubscription(bobID) {
			found = true
			if sr.Expected != 8 || len(sr.Delivered) != 8 {
				t.Errorf("bot audit of Bob's notices: %d expected, %d delivered; want 8 and 8", sr.Expected, len(sr.Delivered))
			}
		}
	}
	if !found {
		t.Errorf("bot audit reports no notices of Bob: %+v", report.Subscriptions)
	}
}

// TestInvitationNoticesOnceWithTwoReplicas: two bots on one PostgreSQL
// send each invitation's notice once.
func TestInvitationNoticesOnceWithTwoReplicas(t *testing.T) {
	t.Parallel()
	pgtest.Server(t)
	w := newWorld(t)
	dbURL := pgtest.URL(t)
	addrA, addrB := freeAddr(t), freeAddr(t)
	front := httpsFront(t, addrA)
	env := w.connectEnv(front, addrA)
	delete(env, "DATABASE_PATH")
	env["DATABASE_URL"] = dbURL
	a := start(t, w.dir, env)
	a.ready()
	envB := map[string]string{}
	for k, v := range env {
		envB[k] = v
	}
	envB["HTTP_ADDR"] = addrB
	b := start(t, w.dir, envB)
	b.ready()
	w.connectForNotices(t, front, addrA)

	var want []string
	for i := range 7 {
		id := fmt.Sprintf("many%d", i)
		w.invitation(t, id, fmt.Sprintf("Many %d", i), at(time.Duration(2+i)*time.Hour))
		want = append(want, meetingbot.InviteKey(bobID, id))
		time.Sleep(300 * time.Millisecond) // some found alone, some together
	}
	eventually(t, 30*time.Second, "a notice of each invitation", func() bool { _, keys := w.notices(); return len(keys) >= len(want) })
	time.Sleep(3 * time.Second) // three passes more of both replicas
	_, keys := w.notices()
	slices.Sort(keys)
	if !slices.Equal(keys, want) {
		t.Errorf("notices = %v, want one of each of %v", keys, want)
	}
}
