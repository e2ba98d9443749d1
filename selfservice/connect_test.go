package selfservice_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/selfservice"
)

// accounts is an in-memory Accounts: connections by user, and the links
// given.
type fakeAccounts struct {
	// slack turns the Slack provider on beside Google's.
	slack   bool
	mu      sync.Mutex
	conns   map[string]meetingbot.Connection
	links   []string
	revoked []string
}

func (a *fakeAccounts) Enabled(p meetingbot.Provider) bool {
	return p == meetingbot.ProviderGoogle || a.slack
}

func (a *fakeAccounts) Link(_ context.Context, p meetingbot.Provider, userID string) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := "https://bot.example.com/" + string(p) + "/oauth/start?t=ticket-" + userID + "-" + string(rune('a'+len(a.links)))
	a.links = append(a.links, l)
	return l, nil
}

// key is a connection's key in conns: the user for Google, "slack:" and
// the user for Slack.
func key(p meetingbot.Provider, userID string) string {
	if p == meetingbot.ProviderSlack {
		return "slack:" + userID
	}
	return userID
}

func (a *fakeAccounts) Connection(_ context.Context, p meetingbot.Provider, userID string) (meetingbot.Connection, bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.conns[key(p, userID)]
	return c, ok, nil
}

func (a *fakeAccounts) Disconnect(_ context.Context, p meetingbot.Provider, userID string) (meetingbot.Connection, bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.conns[key(p, userID)]
	delete(a.conns, key(p, userID))
	if ok {
		a.revoked = append(a.revoked, userID)
	}
	return c, ok, nil
}

func (a *fakeAccounts) set(key string, c meetingbot.Connection) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.conns[key] = c
}

func (a *fakeAccounts) lastLink() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.links[len(a.links)-1]
}

func withAccounts(acc *fakeAccounts) func(*selfservice.Config) {
	return func(c *selfservice.Config) { c.Accounts = acc }
}

func TestConnectAndDisconnectCommands(t *testing.T) {
	acc := &fakeAccounts{conns: map[string]meetingbot.Connection{}}
	e := newEnv(t, withAccounts(acc))
	reply := e.command(alice, aliceD, "connect")
	assert.Contains(t, reply, "<"+acc.lastLink()+"|Connect Google Calendar>", "the reply links to the start")
	assert.Contains(t, reply, "works once, for 10 minutes")

	assert.Contains(t, e.command(alice, aliceD, "disconnect"), "No Google account of yours is connected, so nothing changed")
	acc.set(alice, meetingbot.Connection{Provider: meetingbot.ProviderGoogle, UserID: alice, Account: "alice@example.com", State: meetingbot.ConnectionActive})
	assert.Contains(t, e.command(alice, aliceD, "connect"), "You are connected as alice@example.com already")
	reply = e.command(alice, aliceD, "disconnect")
	assert.Contains(t, reply, "Disconnected alice@example.com: I gave its access back to Google and deleted it")
	assert.Equal(t, []string{alice}, acc.revoked)
	assert.Contains(t, e.command(alice, aliceD, "help"), "connect` / `/meetingbot disconnect`")
	assert.Contains(t, e.command(alice, aliceD, "connect now"), "takes nothing after it")
}

func TestConnectNotSetUp(t *testing.T) {
	e := newEnv(t)
	assert.Contains(t, e.command(alice, aliceD, "connect"), "not set up on this bot")
	assert.NotContains(t, e.command(alice, aliceD, "help"), "connect`")
}

// The Home tab says how the caller's Google account is connected, with
// the control that fits; a stopped connection gets one DM with a
// Reconnect button, whose click answers with a fresh link.
func TestHomeTabAndBrokenConnection(t *testing.T) {
	acc := &fakeAccounts{conns: map[string]meetingbot.Connection{}}
	e := newEnv(t, withAccounts(acc))
	e.openHome(alice)
	home := e.home(alice, 1)
	assert.Contains(t, home, "*Google account:* not connected")
	assert.Contains(t, home, "Connect Google Calendar")
	assert.Contains(t, home, acc.lastLink(), "the Connect button opens a fresh link")

	c := meetingbot.Connection{Provider: meetingbot.ProviderGoogle, UserID: alice, Account: "alice@example.com", State: meetingbot.ConnectionActive}
	acc.set(alice, c)
	e.app.Connected(t.Context(), c)
	home = e.home(alice, 2)
	assert.Contains(t, home, "connected as alice@example.com")
	assert.Contains(t, home, "disconnect_google")
	require.Eventually(t, func() bool { return len(e.slack.Messages()) == 1 }, 5*time.Second, 5*time.Millisecond)
	assert.Contains(t, e.slack.Messages()[0].Text, "Connected alice@example.com: your reminders and agenda now read your calendar with your own access")

	c.State, c.Reason = meetingbot.ConnectionBroken, "Google stopped accepting the access you gave: it was revoked."
	acc.set(alice, c)
	e.app.Broken(t.Context(), c)
	home = e.home(alice, 3)
	assert.Contains(t, home, "the connection of alice@example.com stopped: Google stopped accepting the access you gave: it was revoked")
	assert.Contains(t, home, "Reconnect")
	msgs := e.slack.Messages()
	require.Len(t, msgs, 2)
	assert.Contains(t, msgs[1].Text, "Your reminders from alice@example.com stopped")
	assert.Contains(t, string(msgs[1].Blocks), "reconnect_google", "the DM has a Reconnect button")

	status, _ := e.interact(alice, true, map[string]any{"action_id": "reconnect_google", "value": "reconnect", "type": "button"})
	require.Equal(t, 200, status)
	require.Eventually(t, func() bool {
		for _, r := range e.slack.Responses() {
			if strings.Contains(r.Text, "/google/oauth/start?t=ticket-"+alice) {
				return true
			}
		}
		return false
	}, 5*time.Second, 5*time.Millisecond, "the Reconnect click answers with a fresh link")

	// Disconnect from the Home tab.
	acc.set(alice, meetingbot.Connection{Provider: meetingbot.ProviderGoogle, UserID: alice, Account: "alice@example.com", State: meetingbot.ConnectionActive})
	e.interact(alice, false, map[string]any{"action_id": "disconnect_google", "value": "disconnect", "type": "button"})
	require.Eventually(t, func() bool {
		for _, v := range e.slack.HomeViews() {
			if strings.Contains(string(v.Blocks), "Disconnected alice@example.com") {
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond, "the Home tab after Disconnect")
}

// Without a service account, a calendar the bot cannot read is
// connected, not shared.
func TestUnreadableSaysConnect(t *testing.T) {
	acc := &fakeAccounts{conns: map[string]meetingbot.Connection{}}
	e := newEnv(t, withAccounts(acc), func(c *selfservice.Config) { c.Access = selfservice.Access{} })
	e.cals.set("alice@example.com", noAccess{"not connected"})
	reply := e.command(alice, aliceD, "on")
	assert.Contains(t, reply, "I read only the calendars of people who connected their own Google account: if it is yours, `/meetingbot connect`")
	assert.NotContains(t, reply, "Share it")
}

func (a *fakeAccounts) Forget(_ context.Context, p meetingbot.Provider, userID string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.conns[key(p, userID)]
	delete(a.conns, key(p, userID))
	return ok, nil
}

func (a *fakeAccounts) ForgetAll(_ context.Context, p meetingbot.Provider) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for k := range a.conns {
		if strings.HasPrefix(k, "slack:") {
			delete(a.conns, k)
			n++
		}
	}
	return n, nil
}
