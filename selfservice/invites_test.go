package selfservice_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/selfservice"
)

// withInvites turns answers and invitation notices on, over acc and the
// env's store.
func withInvites(acc *fakeAccounts, ans *fakeAnswers) func(*selfservice.Config) {
	return func(c *selfservice.Config) {
		c.Accounts, c.Answers = acc, ans
		c.Invites = c.Store.(selfservice.InviteStore)
	}
}

// TestInvitesOnAndOff: "/meetingbot invites on" turns notices on from
// now, asking for the grant answering needs where it is missing; again,
// it changes nothing; "off" turns them off; they are off by default, and
// the help says so.
func TestInvitesOnAndOff(t *testing.T) {
	acc := &fakeAccounts{conns: map[string]meetingbot.Connection{}}
	ans := &fakeAnswers{}
	e := newEnv(t, withInvites(acc, ans))
	set, ok, err := e.store.InviteSettingsOf(t.Context(), alice)
	require.NoError(t, err)
	assert.False(t, ok || set.On, "notices of someone who never turned them on")

	for _, tt := range []struct {
		name string
		conn *meetingbot.Connection
		want []string
	}{
		{"not connected", nil, []string{"Invitation notices on: when someone invites you", "connect it, letting me change your answers",
			"<https://bot.example.com/google/oauth/start?t=write-" + alice + "-1|Allow it in Google>"}},
		{"read-only grant", &meetingbot.Connection{Provider: meetingbot.ProviderGoogle, UserID: alice, Account: "alice@example.com", State: meetingbot.ConnectionActive,
			Scopes: []string{"https://www.googleapis.com/auth/calendar.events.readonly"}},
			[]string{"Already on: ", "To answer from those DMs, let me change your answers", "t=write-" + alice + "-2|Allow it in Google>"}},
		{"connection stopped", &meetingbot.Connection{Provider: meetingbot.ProviderGoogle, UserID: alice, Account: "alice@example.com", State: meetingbot.ConnectionBroken,
			Scopes: []string{meetingbot.ScopeCalendarEvents}},
			[]string{"Already on: ", "no notices come until you reconnect", "t=write-" + alice + "-3|"}},
		{"allowed", &meetingbot.Connection{Provider: meetingbot.ProviderGoogle, UserID: alice, Account: "alice@example.com", State: meetingbot.ConnectionActive,
			Scopes: []string{meetingbot.ScopeCalendarEvents}},
			[]string{"Already on: when someone invites you to a meeting, I DM you once, with Going / Maybe / No. Invitations already on your calendar get none. `/meetingbot invites off` stops them."}},
	} {
		if tt.conn != nil {
			acc.set(alice, *tt.conn)
		}
		reply := e.command(alice, aliceD, "invites on")
		for _, w := range tt.want {
			assert.Contains(t, reply, w, "/meetingbot invites on, %s", tt.name)
		}
		if tt.name == "allowed" {
			assert.NotContains(t, reply, "Allow it", "/meetingbot invites on, allowed: no link")
		}
	}
	set, _, err = e.store.InviteSettingsOf(t.Context(), alice)
	require.NoError(t, err)
	assert.True(t, set.On)
	assert.Equal(t, t0, set.Since, "notices on since the first invites on, not the later ones")

	e.clock.Advance(time.Hour)
	assert.Equal(t, "Invitation notices off. `/meetingbot invites on` turns them back on.", e.command(alice, aliceD, "invites off"))
	assert.Contains(t, e.command(alice, aliceD, "invites off"), "already off")
	set, _, _ = e.store.InviteSettingsOf(t.Context(), alice)
	assert.False(t, set.On)
	e.command(alice, aliceD, "invites on")
	set, _, _ = e.store.InviteSettingsOf(t.Context(), alice)
	assert.Equal(t, t0.Add(time.Hour), set.Since, "notices on again: since now, so that invitations made while off get none")

	assert.Contains(t, e.command(alice, aliceD, "help"), "`/meetingbot invites on` / `/meetingbot invites off`")
	assert.Contains(t, e.command(alice, aliceD, "invites maybe"), "`invites` takes `on` or `off`")
}

// TestInvitesNotSetUp: without people's own Google accounts, invitation
// notices are not offered.
func TestInvitesNotSetUp(t *testing.T) {
	e := newEnv(t)
	assert.Contains(t, e.command(alice, aliceD, "invites on"), "not set up on this bot")
	assert.NotContains(t, e.command(alice, aliceD, "help"), "invites on")
	_, _ = e.openHome(alice)
	assert.NotContains(t, e.home(alice, 1), "Invitation notices")
}

// TestInvitesHomeToggle: the Home tab says whether notices are on, and
// its button turns them on and off.
func TestInvitesHomeToggle(t *testing.T) {
	acc := &fakeAccounts{conns: map[string]meetingbot.Connection{alice: {Provider: meetingbot.ProviderGoogle, UserID: alice, Account: "alice@example.com",
		State: meetingbot.ConnectionActive, Scopes: []string{meetingbot.ScopeCalendarEvents}}}}
	e := newEnv(t, withInvites(acc, &fakeAnswers{}))
	_, _ = e.openHome(alice)
	home := e.home(alice, 1)
	assert.Contains(t, home, "*Invitation notices:* off.")
	assert.Contains(t, home, "invites_on\nprimary\nTurn on")

	status, _ := e.interact(alice, false, map[string]any{"action_id": "invites_on", "value": "on"})
	require.Equal(t, 200, status)
	home = e.home(alice, 2)
	assert.Contains(t, home, "Invitation notices on: when someone invites you")
	assert.Contains(t, home, "*Invitation notices:* on.")
	assert.True(t, strings.Contains(home, "invites_off\ndanger\nTurn off"), "the Home tab's toggle after turning on:\n%s", home)

	status, _ = e.interact(alice, false, map[string]any{"action_id": "invites_off", "value": "off"})
	require.Equal(t, 200, status)
	assert.Contains(t, e.home(alice, 3), "Invitation notices off.")
}
