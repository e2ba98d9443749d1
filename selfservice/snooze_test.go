package selfservice_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify/action"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/selfservice"
)

// buttonValue is the value of a snooze button on a reminder of team's
// 09:00 meeting.
var buttonValue = action.SnoozeValue("team", "ev:10m:x", meetingbot.Meeting{ID: "ev", Title: "Weekly sync",
	Start: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), End: time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)})

// snoozes records the clicks it is given and answers them.
type fakeSnoozes struct {
	mu      sync.Mutex
	clicks  []string // user|action|action_ts
	pending []meetingbot.Timer
	cancels []string
}

func (s *fakeSnoozes) Click(ctx context.Context, ask meetingbot.Snooze, clicked time.Time) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clicks = append(s.clicks, ask.User+"|"+string(ask.Mode)+"|"+clicked.UTC().Format(time.RFC3339Nano))
	return "I'll remind you at <!date^1772442000^{time}|09:00 UTC>.", nil
}

func (s *fakeSnoozes) Pending(ctx context.Context, user string) ([]meetingbot.Timer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending, nil
}

func (s *fakeSnoozes) Cancel(ctx context.Context, user, key string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancels = append(s.cancels, user+"|"+key)
	return "Cancelled: no reminder of *Weekly sync* at <!date^1772442000^{time}|09:00 UTC>.", nil
}

// setPending sets what Pending answers; the Home tab may be asking at
// the same time.
func (s *fakeSnoozes) setPending(ts ...meetingbot.Timer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = ts
}

func (s *fakeSnoozes) clicked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.clicks...)
}

// TestSnoozeClickIsStoredBeforeSlackHearsBack: a click on a reminder's
// snooze button is handed to the snoozes before the request URL answers
// 200 (and before the Socket Mode ack), with Slack's action_ts, and its
// answer goes to the clicker through the response_url; the Home tab lists
// the pending snoozes with Cancel, which cancels.
func TestSnoozeClickIsStoredBeforeSlackHearsBack(t *testing.T) {
	sn := &fakeSnoozes{}
	e := newEnv(t, func(c *selfservice.Config) { c.Snoozes = sn })
	status, _ := e.interact(alice, true, map[string]any{"action_id": action.SnoozeStart, "value": buttonValue, "action_ts": "1772441400.123456"})
	require.Equal(t, 200, status)
	assert.Equal(t, []string{alice + "|start|2026-03-02T08:50:00.123456Z"}, sn.clicked(), "stored by the time Slack heard back")
	require.Eventually(t, func() bool {
		for _, r := range e.slack.Responses() {
			if strings.HasPrefix(r.Text, "I'll remind you at <!date^") && r.ResponseType == "ephemeral" {
				return true
			}
		}
		return false
	}, 5*time.Second, 5*time.Millisecond, "the answer on the response_url")

	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	pending := meetingbot.Snooze{User: alice, Mode: meetingbot.SnoozeAtStart, Reminder: "ev:10m:x", Subscription: "team",
		Meeting: meetingbot.Meeting{ID: "ev", Title: "Weekly sync", Start: start}}.Timer(start)
	sn.setPending(pending)
	_, _ = e.openHome(alice)
	home := e.home(alice, 2)
	assert.Contains(t, home, "Reminders you asked for")
	assert.Contains(t, home, "snooze_cancel\nCancel")
	status, _ = e.interact(alice, false, map[string]any{"action_id": "snooze_cancel", "value": pending.Key})
	require.Equal(t, 200, status)
	assert.Contains(t, e.home(alice, 3), "Cancelled: no reminder of *Weekly sync*")
	sn.mu.Lock()
	defer sn.mu.Unlock()
	assert.Equal(t, []string{alice + "|" + pending.Key}, sn.cancels)
}

// TestSnoozeClickOnAButtonOutOfDate: a snooze button whose value does not
// read (a forged one, or one of another version) stores nothing and says
// so.
func TestSnoozeClickOnAButtonOutOfDate(t *testing.T) {
	sn := &fakeSnoozes{}
	e := newEnv(t, func(c *selfservice.Config) { c.Snoozes = sn })
	status, _ := e.interact(alice, true, map[string]any{"action_id": action.SnoozeStart, "value": `{"s":"team"}`, "action_ts": "1772441400.123456"})
	require.Equal(t, 200, status)
	require.Eventually(t, func() bool {
		for _, r := range e.slack.Responses() {
			if strings.HasPrefix(r.Text, "This button is out of date") {
				return true
			}
		}
		return false
	}, 5*time.Second, 5*time.Millisecond, "the answer on the response_url")
	assert.Empty(t, sn.clicked(), "nothing stored")
}

// TestSnoozeClickOverSocketMode: over Socket Mode too, the snooze is
// stored before the envelope is acknowledged.
func TestSnoozeClickOverSocketMode(t *testing.T) {
	sn := &fakeSnoozes{}
	e := newEnv(t, func(c *selfservice.Config) { c.Snoozes = sn })
	ctx, cancel, done := e.socket(slacktest.AppToken)
	defer func() { cancel(); <-done }()
	require.NoError(t, e.slack.WaitSocket(ctx, 1))
	var cb map[string]any
	require.NoError(t, json.Unmarshal(fixture(t, "block_actions.message.json"), &cb))
	cb["user"].(map[string]any)["id"] = alice
	fromOurWorkspace(cb)
	cb["response_url"] = e.slack.ResponseURL()
	act := cb["actions"].([]any)[0].(map[string]any)
	act["action_id"], act["value"], act["action_ts"] = action.Snooze5m, buttonValue, "1772441400.000001"
	id, err := e.slack.SendEnvelope(slacktest.Envelope{Type: "interactive", Payload: cb})
	require.NoError(t, err)
	_, err = e.slack.WaitAck(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, []string{alice + "|5m|2026-03-02T08:50:00.000001Z"}, sn.clicked(), "stored by the time of the ack")
}

// heldSnoozes is fakeSnoozes whose first Pending reads the snoozes, then
// waits for release: a Home tab read before a cancel and published late.
type heldSnoozes struct {
	fakeSnoozes
	entered, release chan struct{}
	held             atomic.Bool
}

func (s *heldSnoozes) Pending(ctx context.Context, user string) ([]meetingbot.Timer, error) {
	ts, err := s.fakeSnoozes.Pending(ctx, user)
	if !s.held.Swap(true) { // the first reading only; sync.Once would hold the others too
		close(s.entered)
		<-s.release
	}
	return ts, err
}

func (s *heldSnoozes) Cancel(ctx context.Context, user, key string) (string, error) {
	s.setPending()
	return s.fakeSnoozes.Cancel(ctx, user, key)
}

// TestHomeTabNotOverwrittenByAnOlderReading: a click on a reminder's
// snooze button republishes the Home tab, and Cancel on the Home tab does
// too; when the first one's reading is slow, the two must not land in the
// other order, the snooze cancelled listed again over the Home tab that
// said it was cancelled.
func TestHomeTabNotOverwrittenByAnOlderReading(t *testing.T) {
	sn := &heldSnoozes{entered: make(chan struct{}), release: make(chan struct{})}
	e := newEnv(t, func(c *selfservice.Config) { c.Snoozes = sn })
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	pending := meetingbot.Snooze{User: alice, Mode: meetingbot.SnoozeAtStart, Reminder: "ev:10m:x", Subscription: "team",
		Meeting: meetingbot.Meeting{ID: "ev", Title: "Weekly sync", Start: start}}.Timer(start)
	sn.setPending(pending)

	status, _ := e.interact(alice, true, map[string]any{"action_id": action.SnoozeStart, "value": buttonValue, "action_ts": "1772441400.123456"})
	require.Equal(t, 200, status)
	select {
	case <-sn.entered: // the click's Home tab has read the snooze, and waits
	case <-time.After(5 * time.Second):
		t.Fatal("the click on the reminder did not republish the Home tab")
	}
	status, _ = e.interact(alice, false, map[string]any{"action_id": "snooze_cancel", "value": pending.Key})
	require.Equal(t, 200, status)
	// Give the cancel's Home tab time to land first, as it would without
	// a lock, then let the older reading go.
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) && !strings.Contains(e.lastHome(alice), "Cancelled: no reminder") {
		time.Sleep(5 * time.Millisecond)
	}
	close(sn.release)
	e.home(alice, 2)
	if home := e.lastHome(alice); strings.Contains(home, pending.Key) || !strings.Contains(home, "Cancelled: no reminder of *Weekly sync*") {
		t.Errorf("the Home tab last published = %q; want the cancel's, without the snooze", home)
	}
}

// lastHome returns the texts of user's Home tab last published, or "".
func (e *env) lastHome(user string) string {
	v, ok := e.slack.HomeView(user)
	if !ok {
		return ""
	}
	return texts(v.Blocks)
}
