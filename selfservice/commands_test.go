package selfservice_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/selfservice"
)

func TestOnReadsTheCalendarBeforeAnswering(t *testing.T) {
	e := newEnv(t)
	reply := e.command(alice, eng, "on")
	assert.Contains(t, reply, "On. Next reminder: *Weekly sync* at "+dateOf(weekly.Start.Add(-10*time.Minute)), "/meetingbot on")
	assert.Contains(t, reply, "10m before it starts")
	assert.Contains(t, reply, "For the meetings on alice@example.com, I DM you 10m and 1m before each meeting.")
	subs := e.subs()
	require.Len(t, subs, 1)
	assert.Equal(t, meetingbot.SlackSubscription{
		ID: "slack:alice@example.com=" + alice, Kind: meetingbot.SlackPersonal, CalendarID: "alice@example.com",
		Destination: alice, Offsets: []time.Duration{time.Minute, 10 * time.Minute}, CreatedBy: alice, CreatedAt: t0,
	}, subs[0], "the subscription the scheduler sweeps")
	assert.Equal(t, "Europe/Berlin", e.settings(alice).TZ, "Slack's zone is kept")

	assert.Contains(t, e.command(alice, eng, "on"), "Already on. Next reminder")
	assert.Len(t, e.subs(), 1, "on twice is one subscription")

	reply = e.command(alice, eng, "on 1h, 5m")
	assert.Contains(t, reply, "On. Next reminder: *Weekly sync* at "+dateOf(weekly.Start.Add(-5*time.Minute)), "the 1h reminder of 09:00 is past at 08:00")
	assert.Equal(t, []time.Duration{5 * time.Minute, time.Hour}, e.subs()[0].Offsets)

	// A calendar without meetings: on, and said so (a minute on: a fourth
	// "on" within the minute would be answered from the last reading).
	e.cals.set("alice@example.com", nil)
	e.clock.Advance(time.Minute)
	assert.Contains(t, e.command(alice, eng, "on"), "No meetings in the next 7 days")
}

func TestOnTellsWhatToDoWhenTheCalendarCannotBeRead(t *testing.T) {
	notShared := noAccess{"calendar bob@example.com: not found or not shared: googleapi: Error 404: Not Found, notFound"}
	for _, tt := range []struct {
		name   string
		access selfservice.Access
		err    error
		want   []string
	}{
		{"service account, not shared", selfservice.Access{ServiceAccount: serviceAccount}, notShared,
			[]string{"I can't read the calendar bob@example.com", "Share it with me", "`" + serviceAccount + "`", "*See all event details*", "`/meetingbot on`", "Nothing changed", "Error 404"}},
		{"impersonation, no delegation", selfservice.Access{ServiceAccount: serviceAccount, Impersonate: true, ClientID: "1234567890"}, noAccess{"impersonation refused: unauthorized_client"},
			[]string{"domain-wide delegation", "Google Workspace admin must grant it", "client ID `1234567890`", "calendar.readonly", "Nothing changed"}},
		{"authorized-user credentials", selfservice.Access{}, notShared,
			[]string{"the Google account the bot signs in as", "*See all event details*"}},
		{"Google down", selfservice.Access{ServiceAccount: serviceAccount}, errors.New("googleapi: Error 503: backendError"),
			[]string{"couldn't reach Google Calendar just now", "Error 503", "Nothing changed; try again in a minute"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(c *selfservice.Config) { c.Access = tt.access })
			e.cals.set("bob@example.com", tt.err)
			reply := e.command(bob, eng, "on")
			for _, w := range tt.want {
				assert.Contains(t, reply, w, "/meetingbot on")
			}
			assert.NotContains(t, reply, "On.")
			assert.Empty(t, e.subs(), "nothing is stored for an unreadable calendar")
		})
	}
}

// TestBadInputChangesNothing runs docs/usage.md's grammar through the real
// handler: each bad command gets a sentence with a valid example and
// leaves subscriptions and settings as they were.
func TestBadInputChangesNothing(t *testing.T) {
	e := newEnv(t, func(c *selfservice.Config) {
		c.Limits = selfservice.Limits{Tick: time.Minute, StartGrace: time.Minute}
	})
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"offsets 5 minutes", []string{"`5 minutes` is not a list of offsets", "`/meetingbot offsets 5m,0`"}},
		{"offsets", []string{"needs the times", "`/meetingbot offsets 5m,0`"}},
		{"offsets -5m", []string{"`-5m` is negative", "`/meetingbot offsets 5m,0`"}},
		{"offsets 1.5s", []string{"not a whole number of seconds"}},
		{"offsets 8d", []string{"is not a list of offsets"}},
		{"offsets 169h", []string{"more than 168h before the meeting"}},
		{"offsets 5m,5m", []string{"`5m` appears twice"}},
		{"offsets 30s", []string{"`30s` is too close to the start", "every 1m", "Use 1m or more"}},
		{"on 10 min", []string{"`10 min` is not a list of offsets", "`/meetingbot on 10m,1m`"}},
		{"on 1m,2m,3m,4m,5m,6m,7m,8m,9m,10m,11m", []string{"11 offsets; 10 is the most"}},
		{"off please", []string{"`off` takes nothing after it", "`/meetingbot off`"}},
		{"list all", []string{"`list` takes nothing"}},
		{"agenda", []string{"a time of day or `off`", "`/meetingbot agenda 08:30`"}},
		{"agenda 25:00", []string{"`25:00` is not a time of day", "`/meetingbot agenda 08:30`"}},
		{"agenda 8am", []string{"`8am` is not a time of day"}},
		{"subscribe", []string{"needs a calendar ID", "`/meetingbot subscribe team@example.com 10m,1m`"}},
		{"subscribe <#C0ENG00001|eng>", []string{"that is a channel"}},
		{"subscribe <@U0BOB00001>", []string{"that is a person"}},
		{"subscribe teamcalendar", []string{"`teamcalendar` is not a calendar ID"}},
		{"subscribe team@example.com 5 minutes", []string{"`5 minutes` is not a list of offsets", "`/meetingbot subscribe team@example.com 10m,1m`"}},
		{"unsubscribe", []string{"needs a calendar ID", "`/meetingbot unsubscribe team@example.com`"}},
		{"unsubscribe team@example.com now", []string{"takes only the calendar ID"}},
		{"frobnicate", []string{"I don't know `frobnicate`", "`/meetingbot on [offsets]`", "*Your DMs:* off"}},
		{"<script>", []string{"I don't know `&lt;script&gt;`"}},
	} {
		reply := e.command(alice, eng, tt.text)
		for _, w := range tt.want {
			assert.Contains(t, reply, w, "/meetingbot %s", tt.text)
		}
		assert.Empty(t, e.subs(), "/meetingbot %s: no subscription", tt.text)
		_, stored, err := e.store.SlackSettingsOf(t.Context(), alice)
		require.NoError(t, err)
		assert.False(t, stored, "/meetingbot %s: no settings", tt.text)
	}
	assert.Zero(t, e.cals.readCount(), "bad input reads no calendar")
}

// TestOffAndOnKeepTheSubscriptionID: the ID is what scopes ledger keys,
// so turning reminders off and on within a meeting's reminder window must
// bring back the same ID (and so no second reminder), and the offsets
// chosen before.
func TestOffAndOnKeepTheSubscriptionID(t *testing.T) {
	e := newEnv(t)
	require.Contains(t, e.command(alice, eng, "on 15m,5m"), "On.")
	before := e.subs()
	require.Len(t, before, 1)

	reply := e.command(alice, eng, "off")
	assert.Contains(t, reply, "Off.")
	assert.Contains(t, reply, "15m and 5m")
	assert.Empty(t, e.subs(), "off: the next sweep sees no subscription")
	assert.Contains(t, e.command(alice, eng, "off"), "already off", "off twice")

	e.clock.Advance(3 * time.Minute)
	require.Contains(t, e.command(alice, eng, "on"), "On.")
	after := e.subs()
	require.Len(t, after, 1)
	assert.Equal(t, before[0].ID, after[0].ID, "the same subscription ID after off and on")
	assert.Equal(t, []time.Duration{5 * time.Minute, 15 * time.Minute}, after[0].Offsets, "the offsets chosen before")
}

func TestOffsetsWhileOnAndWhileOff(t *testing.T) {
	e := newEnv(t)
	reply := e.command(alice, eng, "offsets 5m,0")
	assert.Contains(t, reply, "Saved: 5m before each meeting and as it starts. Your reminders are off")
	assert.Empty(t, e.subs(), "offsets alone turns nothing on")
	require.Contains(t, e.command(alice, eng, "on"), "On.")
	assert.Equal(t, []time.Duration{0, 5 * time.Minute}, e.subs()[0].Offsets, "on uses the saved offsets")

	assert.Contains(t, e.command(alice, eng, "offsets 20m"), "Done: I DM you 20m before each meeting.")
	assert.Equal(t, []time.Duration{20 * time.Minute}, e.subs()[0].Offsets, "the sweep sees the new offsets")
}

func TestAgendaIsStoredInTheUsersZone(t *testing.T) {
	e := newEnv(t)
	assert.Contains(t, e.command(alice, aliceD, "agenda 8:30"), "Daily agenda at 08:30 (Europe/Berlin")
	set := e.settings(alice)
	assert.Equal(t, "08:30", set.Agenda)
	assert.Equal(t, "Europe/Berlin", set.TZ)
	assert.Contains(t, e.command(alice, aliceD, "agenda off"), "No daily agenda.")
	assert.Equal(t, "", e.settings(alice).Agenda)
	assert.Empty(t, e.subs(), "the agenda turns no reminders on")
}

func TestWithoutTheEmailScopeNothingIsStored(t *testing.T) {
	e := newEnv(t)
	reply := e.command(nora, eng, "on")
	assert.Contains(t, reply, "`users:read.email`")
	assert.Empty(t, e.subs())
	assert.Zero(t, e.cals.readCount())
}

func TestSubscribeAndUnsubscribePermissions(t *testing.T) {
	e := newEnv(t)
	for _, who := range []string{"carol@example.com", "olga@example.com", "lisa@example.com", "mike@example.com", "bob@example.com"} {
		e.cals.set(who, nil, weekly)
	}
	for _, tt := range []struct {
		user, calendar string
		allowed        bool
		why            string
	}{
		{alice, "alice@example.com", true, "one's own calendar"},
		{alice, "bob@example.com", false, "someone else's calendar"},
		{bob, team, false, "a shared calendar, as a member"},
		{carol, team, true, "a workspace admin"},
		{olga, "bob@example.com", true, "the workspace owner"},
		{lisa, team, true, "in SLACK_ADMINS by user ID"},
		{mike, "bob@example.com", true, "in SLACK_ADMINS by email, in another case"},
	} {
		before := len(e.subs())
		reply := e.command(tt.user, eng, "subscribe "+tt.calendar)
		if tt.allowed {
			assert.Contains(t, reply, "Subscribed: I'll post the reminders of "+tt.calendar+" in this channel", "%s", tt.why)
			assert.Contains(t, reply, "/invite <@"+"U0BOT00001>", "%s: the bot must be in the channel", tt.why)
			assert.Len(t, e.subs(), before+1, "%s", tt.why)
			// One subscription per calendar and channel: let the next
			// case subscribe it again.
			_, err := e.store.RemoveSlackSubscription(t.Context(), selfservice.SubscriptionID(tt.calendar, eng))
			require.NoError(t, err)
		} else {
			assert.Contains(t, reply, "Only the calendar's owner, workspace admins and owners, and the people in SLACK_ADMINS", "%s", tt.why)
			assert.Contains(t, reply, "Nothing changed", "%s", tt.why)
			assert.Len(t, e.subs(), before, "%s: nothing stored", tt.why)
		}
	}

	require.Contains(t, e.command(carol, eng, "subscribe "+team+" 5m,0"), "Subscribed")
	sub := e.subs()[0]
	assert.Equal(t, meetingbot.SlackSubscription{
		ID: "slack:" + team + "=" + eng, Kind: meetingbot.SlackChannel, CalendarID: team, Destination: eng,
		Offsets: []time.Duration{0, 5 * time.Minute}, CreatedBy: carol, CreatedAt: t0,
	}, sub)
	reply := e.command(bob, eng, "subscribe "+strings.ToUpper(team))
	assert.Contains(t, reply, "Only the calendar's owner", "a member may not even repeat it")
	reply = e.command(carol, eng, "subscribe "+team)
	assert.Contains(t, reply, "Already subscribed: "+team+" is posted here 5m before each meeting and as it starts (set up by <@"+carol+">). Nothing changed")
	assert.Equal(t, []time.Duration{0, 5 * time.Minute}, e.subs()[0].Offsets, "a duplicate subscribe is a no-op")
	// Subscribing again saying what to post changes it, for whoever set it up.
	reply = e.command(carol, eng, "subscribe "+team+" 1h")
	assert.Contains(t, reply, "Changed: I'll post in this channel reminders 1h before each meeting of "+team)
	assert.Equal(t, []time.Duration{time.Hour}, e.subs()[0].Offsets, "offsets changed by subscribing again")

	reply = e.command(bob, eng, "unsubscribe "+team)
	assert.Contains(t, reply, "Only <@"+carol+">, who set it up", "a member may not unsubscribe it")
	assert.Len(t, e.subs(), 1)
	assert.Contains(t, e.command(bob, ops, "unsubscribe "+team), "I don't post "+team+" here, so nothing changed")
	assert.Contains(t, e.command(lisa, eng, "unsubscribe "+team), "Unsubscribed")
	assert.Empty(t, e.subs())

	assert.Contains(t, e.command(alice, aliceD, "subscribe alice@example.com"), "Run `subscribe` in the channel", "not in a DM")
	assert.Empty(t, e.subs())
}

func TestSubscribeReadsTheCalendarOnce(t *testing.T) {
	e := newEnv(t)
	e.cals.set("secret@group.calendar.google.com", noAccess{"googleapi: Error 404: Not Found, notFound"})
	reply := e.command(carol, eng, "subscribe secret@group.calendar.google.com")
	assert.Contains(t, reply, "I can't read the calendar secret@group.calendar.google.com")
	assert.Contains(t, reply, "`/meetingbot subscribe secret@group.calendar.google.com`", "how to try again")
	assert.Empty(t, e.subs())

	reply = e.command(carol, eng, "subscribe <mailto:"+team+"|"+team+">")
	assert.Contains(t, reply, "Next reminder: *Team standup* at "+dateOf(teamMtg.Start.Add(-10*time.Minute)))
	assert.Len(t, e.subs(), 1)
}

func TestOperatorSubscriptionsAreShownButNotChanged(t *testing.T) {
	e := newEnv(t, func(c *selfservice.Config) {
		c.Operator = []selfservice.Fixed{
			{ID: "ops@example.com=#ops", CalendarID: "ops@example.com", Destination: "#ops", Offsets: []time.Duration{5 * time.Minute}},
			{ID: "alice@example.com", CalendarID: "alice@example.com", Offsets: []time.Duration{10 * time.Minute}},
		}
	})
	e.cals.set("ops@example.com", nil)

	list := e.command(bob, ops, "list")
	assert.Contains(t, list, "*In this channel:*\n• ops@example.com, 5m before each meeting (the bot's configuration)")
	assert.Contains(t, e.command(carol, ops, "unsubscribe ops@example.com"), "comes from the bot's configuration (CALENDARS")
	assert.Contains(t, e.command(carol, ops, "subscribe ops@example.com"), "Already posted here")
	assert.Empty(t, e.subs(), "nothing duplicates the operator's subscription")

	for _, text := range []string{"on", "off", "offsets 5m"} {
		assert.Contains(t, e.command(alice, eng, text), "comes from the bot's configuration", "/meetingbot %s for a DM of CALENDARS", text)
	}
	assert.Empty(t, e.subs(), "Alice gets one DM per meeting, not two")
	assert.Contains(t, e.command(alice, eng, "list"), "*Your DMs:* on for alice@example.com, 10m before each meeting (the bot's configuration)")
}

func TestListAndHelpShowTheCallersSettings(t *testing.T) {
	e := newEnv(t)
	require.Contains(t, e.command(alice, eng, "on 10m,0"), "On.")
	require.Contains(t, e.command(alice, eng, "agenda 07:45"), "Daily agenda")
	require.Contains(t, e.command(carol, eng, "subscribe "+team), "Subscribed")

	list := e.command(alice, eng, "list")
	assert.Contains(t, list, "*In this channel:*\n• "+team+", 10m and 1m before each meeting (set up by <@"+carol+">)")
	assert.Contains(t, list, "*Your DMs:* on for alice@example.com, 10m before each meeting and as it starts.")
	assert.Contains(t, list, "*Daily agenda:* 07:45 (Europe/Berlin).")
	assert.Contains(t, e.command(alice, ops, "list"), "*In this channel:* nothing yet.")
	assert.NotContains(t, e.command(alice, aliceD, "list"), "In this channel", "a DM has no channel subscriptions")

	for _, text := range []string{"", "help", "HELP"} {
		help := e.command(alice, eng, text)
		assert.Contains(t, help, "`/meetingbot subscribe <calendar> [offsets]`", "/meetingbot %s", text)
		assert.Contains(t, help, "*Your DMs:* on for alice@example.com, 10m before each meeting and as it starts", "/meetingbot %s", text)
		assert.NotContains(t, help, "I don't know")
	}
}

func TestUserInfoIsCached(t *testing.T) {
	e := newEnv(t, func(c *selfservice.Config) { c.UserCacheTTL = 10 * time.Minute })
	e.command(alice, eng, "on")
	e.command(alice, eng, "agenda 09:00")
	assert.Len(t, e.slack.CallsTo("users.info"), 1, "users.info within the cache's life")
	e.clock.Advance(10 * time.Minute)
	e.command(alice, eng, "agenda 09:15")
	assert.Len(t, e.slack.CallsTo("users.info"), 2, "users.info after it")
}
