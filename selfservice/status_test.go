package selfservice_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/selfservice"
)

func withStatus(acc *fakeAccounts) func(*selfservice.Config) {
	acc.slack = true
	return func(c *selfservice.Config) { c.Accounts, c.StatusSettings = acc, nil }
}

// Titles are a choice kept in the store.
func TestStatusTitles(t *testing.T) {
	acc := &fakeAccounts{conns: map[string]meetingbot.Connection{}, slack: true}
	var e *env
	e = newEnv(t, func(c *selfservice.Config) { c.Accounts = acc; c.StatusSettings = c.Store.(selfservice.StatusSettings) })
	assert.Contains(t, e.command(alice, aliceD, "status titles"), "Your status will show the meeting's title")
	set, ok, err := e.store.StatusSettingsOf(t.Context(), alice)
	require.NoError(t, err)
	assert.True(t, ok && set.Titles, "titles stored")
	assert.Contains(t, e.command(alice, aliceD, "status titles off"), "without the title")
	set, _, _ = e.store.StatusSettingsOf(t.Context(), alice)
	assert.False(t, set.Titles, "titles off stored")
}

// event sends an Events API callback with inner event ev.
func (e *env) event(id string, ev map[string]any) {
	e.t.Helper()
	b, _ := json.Marshal(map[string]any{"token": "x", "team_id": slacktest.TeamID, "api_app_id": slacktest.AppID, "event": ev,
		"type": "event_callback", "event_id": id, "event_time": time.Now().Unix()})
	status, body := e.send(e.signed(selfservice.PathEvents, "application/json", b))
	require.Equal(e.t, 200, status, body)
}

func TestStatusOnAndOff(t *testing.T) {
	acc := &fakeAccounts{conns: map[string]meetingbot.Connection{}}
	e := newEnv(t, withStatus(acc))
	reply := e.command(alice, aliceD, "status on")
	assert.Contains(t, reply, "<"+acc.lastLink()+"|Allow it in Slack>")
	assert.Contains(t, acc.lastLink(), "/slack/oauth/start?t=")
	assert.Contains(t, e.command(alice, aliceD, "status off"), "I don't set your status, so nothing changed")
	assert.Contains(t, e.command(alice, aliceD, "status maybe"), "`status` takes `on`, `off`, `titles`, `titles off`, `ooo` or `ooo off`")
	assert.Contains(t, e.command(alice, aliceD, "help"), "status on` / `/meetingbot status off`")

	acc.set("slack:"+alice, meetingbot.Connection{Provider: meetingbot.ProviderSlack, UserID: alice, Account: alice, State: meetingbot.ConnectionActive})
	e.openHome(alice)
	assert.Contains(t, e.home(alice, 1), "*Status during meetings:* on")
	assert.Contains(t, e.command(alice, aliceD, "status off"), "Status off: I gave the access back to Slack")
	_, still := acc.conns["slack:"+alice]
	assert.False(t, still, "status off left the connection")
}

// tokens_revoked deletes the users' connections it names; app_uninstalled
// deletes them all.
func TestRevokedTokensEvents(t *testing.T) {
	acc := &fakeAccounts{conns: map[string]meetingbot.Connection{}}
	e := newEnv(t, withStatus(acc))
	for _, u := range []string{alice, bob, carol} {
		acc.set("slack:"+u, meetingbot.Connection{Provider: meetingbot.ProviderSlack, UserID: u, Account: u, State: meetingbot.ConnectionActive})
	}
	e.event("Ev0REVOKED01", map[string]any{"type": "tokens_revoked", "tokens": map[string]any{"oauth": []string{alice}, "bot": []string{}}, "event_ts": "1"})
	require.Eventually(t, func() bool {
		acc.mu.Lock()
		defer acc.mu.Unlock()
		_, ok := acc.conns["slack:"+alice]
		return !ok && len(acc.conns) == 2
	}, 5*time.Second, 5*time.Millisecond, "tokens_revoked deletes alice's connection only")
	e.event("Ev0UNINSTAL1", map[string]any{"type": "app_uninstalled", "event_ts": "2"})
	require.Eventually(t, func() bool {
		acc.mu.Lock()
		defer acc.mu.Unlock()
		return len(acc.conns) == 0
	}, 5*time.Second, 5*time.Millisecond, "app_uninstalled deletes every Slack connection")
	assert.False(t, strings.Contains(e.command(alice, aliceD, "status off"), "Status off"), "a deleted connection turned off again")
}

// Out of office is a choice kept beside titles: "/meetingbot status ooo",
// "status ooo off", and the Home tab's toggle, each keeping the other
// setting as it was.
func TestStatusOutOfOffice(t *testing.T) {
	acc := &fakeAccounts{conns: map[string]meetingbot.Connection{}, slack: true}
	e := newEnv(t, func(c *selfservice.Config) { c.Accounts = acc; c.StatusSettings = c.Store.(selfservice.StatusSettings) })
	stored := func() meetingbot.StatusSettings {
		set, _, err := e.store.StatusSettingsOf(t.Context(), alice)
		require.NoError(t, err)
		return set
	}
	e.command(alice, aliceD, "status titles")
	assert.Contains(t, e.command(alice, aliceD, "status ooo"), ":palm_tree: \"Out of office\" until their end")
	assert.True(t, stored().OutOfOffice && stored().Titles, "status ooo: out of office on, titles kept")
	assert.Contains(t, e.command(alice, aliceD, "status ooo off"), "leave your status alone")
	assert.True(t, !stored().OutOfOffice && stored().Titles, "status ooo off: out of office off, titles kept")
	e.command(alice, aliceD, "status titles off")
	assert.False(t, stored().Titles || stored().OutOfOffice, "status titles off: both off")
	assert.Contains(t, e.command(alice, aliceD, "help"), "`/meetingbot status ooo` says \"Out of office\"")

	acc.set("slack:"+alice, meetingbot.Connection{Provider: meetingbot.ProviderSlack, UserID: alice, Account: alice, State: meetingbot.ConnectionActive})
	e.openHome(alice)
	home := e.home(alice, 1)
	assert.Contains(t, home, "*Out of office:* off")
	assert.Contains(t, home, "status_ooo_on")
	e.interact(alice, false, map[string]any{"action_id": "status_ooo_on", "value": "on", "type": "button"})
	require.Eventually(t, func() bool { return stored().OutOfOffice }, 5*time.Second, 5*time.Millisecond, "the Home tab's Turn on stores out of office on")
	assert.Contains(t, e.home(alice, 2), ":palm_tree: *Out of office:* on")
}
