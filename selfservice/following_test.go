package selfservice_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
)

// TestSubscribeWhatToFollowBadInput: each mistake in what a channel
// follows is answered with what was wrong and a valid example, and
// changes nothing.
func TestSubscribeWhatToFollowBadInput(t *testing.T) {
	e := newEnv(t)
	const example = "`/meetingbot subscribe " + team + " none changes daily 09:00 weekly mon 09:00`"
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"subscribe " + team + " none", []string{"with `none` there would be nothing to post", example}},
		{"subscribe " + team + " none 10m changes", []string{"`none` means no reminders, so `10m` cannot come with it", example}},
		{"subscribe " + team + " daily", []string{"`daily` needs the agenda's time of day", example}},
		{"subscribe " + team + " daily 9am", []string{"`9am` is not a time of day", example}},
		{"subscribe " + team + " weekly 09:00", []string{"`weekly` needs a day and a time", example}},
		{"subscribe " + team + " weekly someday 09:00", []string{"`someday` is not a day of the week", example}},
		{"subscribe " + team + " weekly mon 25:00", []string{"`25:00` is not a time of day", example}},
		{"subscribe " + team + " changes changes", []string{"`changes` appears twice", example}},
		{"subscribe " + team + " changes 5 minutes", []string{"`5 minutes` is not a list of offsets", "`/meetingbot subscribe team@example.com 10m,1m`"}},
	} {
		reply := e.command(carol, eng, tt.text)
		for _, w := range tt.want {
			assert.Contains(t, reply, w, "/meetingbot %s", tt.text)
		}
		assert.Empty(t, e.subs(), "/meetingbot %s: no subscription", tt.text)
	}
}

// TestSubscribeAChannelToChangesAndAgendas: "none changes daily 09:00
// weekly mon 09:00" makes a subscription with no reminders that follows
// the changes from now and posts agendas in the subscriber's zone;
// subscribing again changes what it posts, keeping when it began to
// follow the changes, and only for those who may change it.
func TestSubscribeAChannelToChangesAndAgendas(t *testing.T) {
	e := newEnv(t)
	e.cals.set(team, nil, weekly)
	reply := e.command(carol, eng, "subscribe "+team+" none changes daily 9:00 weekly Monday 09:00")
	assert.Contains(t, reply, "Subscribed: I'll post in this channel each change of the calendar (added, moved, cancelled, renamed), a daily agenda at 09:00 and a weekly agenda on Mondays at 09:00 (")
	subs := e.subs()
	require.Len(t, subs, 1)
	got := subs[0]
	assert.Empty(t, got.Offsets, "none: no reminders")
	assert.True(t, got.ChangesSince.Equal(t0), "changes followed since %v, want %v", got.ChangesSince, t0)
	assert.Equal(t, "09:00", got.Daily)
	assert.Equal(t, "mon 09:00", got.Weekly)
	assert.NotEmpty(t, got.Zone, "the agendas' zone is the subscriber's")

	assert.Contains(t, e.command(bob, eng, "subscribe "+team+" 10m"), "Only the calendar's owner", "a member may not change it")
	assert.Contains(t, e.command(carol, eng, "subscribe "+team), "Already subscribed: "+team+" is posted here with each change of the calendar")

	e.clock.Advance(time.Hour)
	reply = e.command(carol, eng, "subscribe "+team+" 10m changes")
	assert.Contains(t, reply, "Changed: I'll post in this channel reminders 10m before each meeting, and each change of the calendar")
	got = e.subs()[0]
	assert.Equal(t, []time.Duration{10 * time.Minute}, got.Offsets)
	assert.True(t, got.ChangesSince.Equal(t0), "changes still followed since %v, want %v", got.ChangesSince, t0)
	assert.Equal(t, meetingbot.Following{ChangesSince: t0}, got.Following, "no agendas any more")
}

// TestTheHomeTabShowsAndTogglesAChannelsChanges: the person who set up a
// channel subscription sees in their Home tab what it posts, and turns
// its change notices off and on there (on again from the click: nothing
// changed meanwhile is told).
func TestTheHomeTabShowsAndTogglesAChannelsChanges(t *testing.T) {
	e := newEnv(t)
	e.cals.set(team, nil, weekly)
	require.Contains(t, e.command(carol, eng, "subscribe "+team+" 10m changes daily 09:00"), "Subscribed")
	e.openHome(carol)
	home := e.home(carol, 1)
	assert.Contains(t, home, "Channels you set up")
	assert.Contains(t, home, team+", reminders 10m before each meeting, and each change of the calendar")
	id := e.subs()[0].ID

	e.interact(carol, false, map[string]any{"action_id": "home_channel_changes", "type": "button", "value": id})
	assert.Contains(t, e.home(carol, 2), "posts reminders 10m before each meeting, and a daily agenda at 09:00")
	assert.True(t, e.subs()[0].ChangesSince.IsZero(), "changes off")
	assert.Equal(t, "09:00", e.subs()[0].Daily, "the agenda stays")

	e.clock.Advance(time.Hour)
	e.interact(carol, false, map[string]any{"action_id": "home_channel_changes", "type": "button", "value": id})
	e.home(carol, 3)
	assert.True(t, e.subs()[0].ChangesSince.Equal(t0.Add(time.Hour)), "changes on again from the click: %v", e.subs()[0].ChangesSince)

	e.interact(bob, false, map[string]any{"action_id": "home_channel_changes", "type": "button", "value": id})
	assert.Contains(t, e.home(bob, 1), "Only <@"+carol+">, who set it up")
	assert.False(t, e.subs()[0].ChangesSince.IsZero(), "a member cannot turn them off")
}
