package selfservice_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot/notify/action"
	"github.com/meetingbot/meetingbot/selfservice"
)

func TestAppHomeIsPublishedWhenOpened(t *testing.T) {
	e := newEnv(t)
	status, _ := e.openHome(alice)
	require.Equal(t, http.StatusOK, status, "app_home_opened is acknowledged")
	home := e.home(alice, 1)
	for _, want := range []string{
		"Meeting reminders",
		"*Reminders: off.* Turn them on for a DM 10m and 1m before each meeting on your calendar.",
		"Turn on",
		"*When:* 10m and 1m before each meeting",
		"*Daily agenda:* none.",
		":white_check_mark: *Your calendar:* I can read alice@example.com.",
	} {
		assert.Contains(t, home, want)
	}
	assert.NotContains(t, home, "Next reminders", "no reminders while off")

	// Opening the Messages tab publishes nothing.
	views := len(e.slack.HomeViews())
	var ev map[string]any
	require.NoError(t, json.Unmarshal(fixture(t, "app_home_opened.json"), &ev))
	ev["event"].(map[string]any)["tab"] = "messages"
	fromOurWorkspace(ev)
	messages, _ := json.Marshal(ev)
	status, _ = e.send(e.signed(selfservice.PathEvents, "application/json", messages))
	require.Equal(t, http.StatusOK, status)
	e.openHome(bob) // a later event that does publish
	e.home(bob, 1)
	assert.Len(t, e.slack.HomeViews(), views+1, "only the Home tab is published")
}

func TestAppHomeControlsChangeTheSameSettings(t *testing.T) {
	e := newEnv(t)
	status, _ := e.interact(alice, false, map[string]any{"action_id": "home_on", "type": "button", "value": "on"})
	require.Equal(t, http.StatusOK, status, "block_actions is acknowledged")
	home := e.home(alice, 1)
	assert.Contains(t, home, "On. Next reminder: *Weekly sync* at "+dateOf(weekly.Start.Add(-10*time.Minute)), "the outcome heads the tab")
	assert.Contains(t, home, "*Reminders: on.* For the meetings on alice@example.com, I DM you 10m and 1m before each meeting.")
	assert.Contains(t, home, "Turn off")
	assert.Contains(t, home, "*Next reminders:*\n• "+dateOf(weekly.Start.Add(-10*time.Minute)), "the next reminder comes first")
	assert.Contains(t, home, "*Budget &lt;review&gt; &amp; co*", "titles are escaped")
	require.Len(t, e.subs(), 1, "the button made the same subscription as /meetingbot on")

	e.interact(alice, false, map[string]any{"action_id": "home_offsets", "type": "static_select",
		"selected_option": map[string]any{"value": "5m,0", "text": map[string]any{"type": "plain_text", "text": "5m before and at the start"}}})
	home = e.home(alice, 2)
	assert.Contains(t, home, "Done: I DM you 5m before each meeting and as it starts.")
	assert.Equal(t, []time.Duration{0, 5 * time.Minute}, e.subs()[0].Offsets)

	e.interact(alice, false, map[string]any{"action_id": "home_agenda", "type": "timepicker", "selected_time": "07:45"})
	home = e.home(alice, 3)
	assert.Contains(t, home, "*Daily agenda:* at 07:45 (Europe/Berlin) on each day that has meetings.")
	assert.Contains(t, home, "No agenda")
	assert.Equal(t, "07:45", e.settings(alice).Agenda)

	e.interact(alice, false, map[string]any{"action_id": "home_agenda_off", "type": "button", "value": "off"})
	e.home(alice, 4)
	assert.Equal(t, "", e.settings(alice).Agenda)

	e.interact(alice, false, map[string]any{"action_id": "home_off", "type": "button", "value": "off"})
	home = e.home(alice, 5)
	assert.Contains(t, home, "*Reminders: off.*")
	assert.Empty(t, e.subs())
	assert.Equal(t, []time.Duration{0, 5 * time.Minute}, e.settings(alice).Offsets, "the choice is kept for on")
}

func TestAppHomeSaysHowToFixAnUnreadableCalendar(t *testing.T) {
	e := newEnv(t)
	e.cals.set("alice@example.com", noAccess{"googleapi: Error 404: Not Found, notFound"})
	e.openHome(alice)
	home := e.home(alice, 1)
	assert.Contains(t, home, ":warning: *Your calendar:* I can't read the calendar alice@example.com.")
	assert.Contains(t, home, "add `"+serviceAccount+"` with *See all event details*")
	assert.Contains(t, home, "Check again")

	e.interact(alice, false, map[string]any{"action_id": "home_on", "type": "button", "value": "on"})
	home = e.home(alice, 2)
	assert.Contains(t, home, "then try *Turn on* again")
	assert.Empty(t, e.subs(), "Turn on stores nothing for an unreadable calendar")

	e.cals.set("alice@example.com", nil, weekly)
	e.interact(alice, false, map[string]any{"action_id": "home_refresh", "type": "button", "value": "check"})
	assert.Contains(t, e.home(alice, 3), "I can read alice@example.com")
}

func TestAppHomeOffersOnlyOffsetsTheSweepCannotMiss(t *testing.T) {
	e := newEnv(t, func(c *selfservice.Config) {
		c.Limits = selfservice.Limits{Tick: 2 * time.Minute, StartGrace: time.Minute}
		c.DefaultOffsets = []time.Duration{10 * time.Minute}
	})
	e.openHome(alice)
	home := e.home(alice, 1)
	assert.Contains(t, home, "15m,5m", "a choice the sweep cannot miss")
	assert.NotContains(t, home, "10m,1m", "1m is shorter than the 2m sweep")
	assert.NotContains(t, home, "5m,0", "0 needs a sweep of at most 1m")

	// A forged or outdated choice is refused like typed input.
	e.interact(alice, false, map[string]any{"action_id": "home_offsets", "type": "static_select",
		"selected_option": map[string]any{"value": "1m", "text": map[string]any{"type": "plain_text", "text": "1m"}}})
	assert.Contains(t, e.home(alice, 2), "That choice is out of date")
	assert.Nil(t, e.settings(alice).Offsets)
}

func TestMuteSeriesFromAReminder(t *testing.T) {
	e := newEnv(t)
	require.Contains(t, e.command(alice, eng, "on"), "On.")
	id := selfservice.SubscriptionID("alice@example.com", alice)
	mute := map[string]any{"action_id": action.MuteSeries, "type": "button", "value": action.MuteValue(id, "weekly", "Weekly sync")}

	// Bob cannot mute Alice's reminders.
	status, _ := e.interact(bob, true, mute)
	require.Equal(t, http.StatusOK, status)
	require.Eventually(t, func() bool { return len(e.slack.Responses()) == 1 }, 5*time.Second, 5*time.Millisecond)
	assert.Contains(t, e.slack.Responses()[0].Text, "Only <@"+alice+"> can mute their own reminders")
	assert.Empty(t, e.subs()[0].Muted)

	e.interact(alice, true, mute)
	require.Eventually(t, func() bool { return len(e.slack.Responses()) == 2 }, 5*time.Second, 5*time.Millisecond)
	r := e.slack.Responses()[1]
	assert.Equal(t, "ephemeral", r.ResponseType)
	assert.False(t, r.ReplaceOriginal, "the reminder itself stays")
	assert.Contains(t, r.Text, "Muted *Weekly sync* in your DMs")
	assert.Equal(t, []string{"weekly"}, e.subs()[0].Muted, "the scheduler sees the muted series")

	home := e.home(alice, 1)
	assert.Contains(t, home, "*Muted series:*")
	assert.Contains(t, home, "*Weekly sync* in your DMs")
	assert.Contains(t, home, "Unmute")
	assert.Contains(t, home, "*Next reminders:*\n• "+dateOf(oneOff.Start.Add(-10*time.Minute)), "a muted series has no next reminder")

	e.interact(alice, false, map[string]any{"action_id": "unmute_series", "type": "button", "value": action.MuteValue(id, "weekly", "Weekly sync")})
	home = e.home(alice, 2)
	assert.Contains(t, home, "Unmuted *Weekly sync*: its reminders come in your DMs again.")
	assert.NotContains(t, home, "*Muted series:*")
	assert.Empty(t, e.subs()[0].Muted)
}

func TestMuteSeriesOfAChannelSubscription(t *testing.T) {
	e := newEnv(t, func(c *selfservice.Config) {
		c.Operator = []selfservice.Fixed{{ID: "ops@example.com=#ops", CalendarID: "ops@example.com", Destination: "#ops", Offsets: []time.Duration{time.Minute}}}
	})
	require.Contains(t, e.command(carol, eng, "subscribe "+team), "Subscribed")
	id := selfservice.SubscriptionID(team, eng)
	value := action.MuteValue(id, "standup", "Team standup")
	for _, tt := range []struct {
		user, value, want string
	}{
		{bob, value, "Only <@" + carol + ">, who set it up"},
		{alice, "not json", "This button is out of date"},
		{alice, action.MuteValue("ops@example.com=#ops", "x", "Ops"), "come from the bot's configuration"},
		{alice, action.MuteValue("slack:gone@example.com="+eng, "x", "Gone"), "turned off since"},
		{lisa, value, "Muted *Team standup* in <#" + eng + ">"},
		{carol, value, "Already muted in <#" + eng + ">: *Team standup*."},
	} {
		n := len(e.slack.Responses())
		e.interact(tt.user, true, map[string]any{"action_id": action.MuteSeries, "type": "button", "value": tt.value})
		require.Eventually(t, func() bool { return len(e.slack.Responses()) == n+1 }, 5*time.Second, 5*time.Millisecond)
		assert.Contains(t, e.slack.Responses()[n].Text, tt.want, "%s clicks mute", tt.user)
	}
	assert.Equal(t, []string{"standup"}, e.subs()[0].Muted)
	assert.Contains(t, e.home(carol, 1), "*Team standup* in <#"+eng+"> ("+team+")", "listed for the one who set it up")
}
