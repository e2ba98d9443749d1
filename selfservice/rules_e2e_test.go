package selfservice_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/selfservice"
)

// A person sets their calendar's own reminders and their rules by
// command; their reminders follow at once, and keep them while off.
func TestCalendarRemindersAndRulesByCommand(t *testing.T) {
	e := newEnv(t)
	reply := e.command(alice, eng, "on calendar")
	assert.Contains(t, reply, "I DM you at each meeting's own reminders in Google Calendar.")
	require.Len(t, e.subs(), 1)
	assert.True(t, e.subs()[0].OnCalendar)
	assert.Empty(t, e.subs()[0].Offsets, "the calendar's reminders alone")

	assert.Contains(t, e.command(alice, eng, "offsets calendar,5m"), "at each meeting's own reminders in Google Calendar and 5m before it")
	assert.Equal(t, []time.Duration{5 * time.Minute}, e.subs()[0].Offsets)

	assert.Contains(t, e.command(alice, eng, "skip unanswered"), "except invitations not answered")
	assert.Contains(t, e.command(alice, eng, "skip maybe"), "except invitations not answered, those answered maybe")
	e.command(alice, eng, "skip alone")
	e.command(alice, eng, "skip nolink")
	assert.Contains(t, e.command(alice, eng, "unskip alone"), "except invitations not answered, those answered maybe, those without a video link")
	reply = e.command(alice, eng, "hours 09:00-18:00 mon-fri")
	assert.Contains(t, reply, "outside 09:00-18:00 mon-fri (Europe/Berlin) only meetings accepted", "in Alice's Slack time zone")
	got := e.subs()[0].Subscription()
	assert.Equal(t, meetingbot.Rules{SkipUnanswered: true, SkipMaybe: true, SkipNoLink: true,
		Hours: &meetingbot.Hours{From: 9 * 60, To: 18 * 60, Days: []time.Weekday{1, 2, 3, 4, 5}, Zone: "Europe/Berlin"}}, got.Rules)
	assert.True(t, got.OnCalendar, "the swept subscription reminds at the calendar's reminders")

	e.command(alice, eng, "off")
	e.command(alice, eng, "hours off")
	reply = e.command(alice, eng, "on")
	assert.Contains(t, reply, "at each meeting's own reminders in Google Calendar and 5m before it, except invitations not answered, those answered maybe, those without a video link.", "off and on keep the choice")
	assert.Nil(t, e.subs()[0].Rules.Hours)

	// Alice moves to New York: her working hours follow her zone when she
	// next turns her reminders on.
	e.command(alice, eng, "hours 09:00-18:00 mon-fri")
	e.command(alice, eng, "off")
	e.slack.SetProfile(alice, slacktest.Profile{TZ: "America/New_York"})
	e.clock.Advance(time.Hour) // past the cache of people
	assert.Contains(t, e.command(alice, eng, "on"), "outside 09:00-18:00 mon-fri (America/New_York)")
	assert.Equal(t, "America/New_York", e.subs()[0].Rules.Hours.Zone)

	assert.Contains(t, e.command(alice, eng, "on 10m"), "10m before each meeting")
	assert.False(t, e.subs()[0].OnCalendar, "offsets without calendar: the calendar's reminders no more")
}

// With the calendar's own reminders, the next reminder is a meeting's
// popup: said when turned on, shown in the Home tab, and in the answer to
// a reply; a calendar whose meetings have none says so, not "no
// meetings".
func TestNextReminderAtTheCalendarsOwnPopup(t *testing.T) {
	e := newEnv(t)
	plan := selfservice.Meeting{Title: "Plan", Start: t0.Add(2 * time.Hour), Reminders: []time.Duration{15 * time.Minute}}
	e.cals.set("alice@example.com", nil, weekly, plan)
	reply := e.command(alice, eng, "on calendar")
	assert.Contains(t, reply, "Next reminder: *Plan* at "+dateOf(plan.Start.Add(-15*time.Minute)), "the popup, not the weekly sync without one")
	assert.Contains(t, reply, "(15m before it starts)")
	e.openHome(alice)
	assert.Contains(t, e.home(alice, 1), "*Next reminders:*\n• "+dateOf(plan.Start.Add(-15*time.Minute)))

	e.cals.set("alice@example.com", nil, weekly)
	e.clock.Advance(time.Hour) // past the readings kept
	reply = e.command(alice, eng, "on calendar")
	assert.Contains(t, reply, "No reminder due in the next 7 days; you'll be reminded at each meeting's own reminders in Google Calendar.")
}

// A channel subscription takes the same words after subscribe, and one
// who may change it changes its rules by subscribing again with them.
func TestChannelSubscriptionRules(t *testing.T) {
	e := newEnv(t)
	reply := e.command(alice, eng, "subscribe alice@example.com calendar skip alone")
	assert.Contains(t, reply, "at each meeting's own reminders in Google Calendar, except those with no other attendee.")
	require.Len(t, e.subs(), 1)
	assert.True(t, e.subs()[0].OnCalendar)
	assert.True(t, e.subs()[0].Rules.SkipAlone)

	reply = e.command(alice, eng, "subscribe alice@example.com unskip alone hours 10:00-16:00 mon-thu")
	assert.Contains(t, reply, "Done: I post the reminders of alice@example.com here at each meeting's own reminders in Google Calendar, outside 10:00-16:00 mon-thu (Europe/Berlin) only meetings accepted.")
	assert.False(t, e.subs()[0].Rules.SkipAlone)

	reply = e.command(bob, eng, "subscribe alice@example.com skip maybe")
	assert.False(t, e.subs()[0].Rules.SkipMaybe, "bob may not change alice's calendar's subscription: %s", reply)
}

// checkedRules returns the values of the rules' checkboxes checked in
// user's last Home tab.
func checkedRules(t *testing.T, e *env, user string) []string {
	t.Helper()
	v, ok := e.slack.HomeView(user)
	require.True(t, ok)
	var blocks []struct {
		Type     string `json:"type"`
		Elements []struct {
			ActionID string `json:"action_id"`
			Initial  []struct {
				Value string `json:"value"`
			} `json:"initial_options"`
			Options []json.RawMessage `json:"options"`
		} `json:"elements"`
	}
	require.NoError(t, json.Unmarshal(v.Blocks, &blocks))
	for _, b := range blocks {
		for _, el := range b.Elements {
			if el.ActionID == "home_rules" {
				require.Len(t, el.Options, 5, "the calendar's reminders and four rules")
				out := []string{}
				for _, o := range el.Initial {
					out = append(out, o.Value)
				}
				return out
			}
		}
	}
	t.Fatal("no rules' checkboxes in the Home tab")
	return nil
}

// The Home tab shows the calendar's reminders and each rule as a checkbox
// and turns each on and off; it shows the working hours and turns them
// off.
func TestAppHomeTurnsEachRuleOnAndOff(t *testing.T) {
	e := newEnv(t)
	e.interact(alice, false, map[string]any{"action_id": "home_on", "type": "button", "value": "on"})
	e.home(alice, 1)
	assert.Empty(t, checkedRules(t, e, alice), "nothing checked: today's behaviour")

	n := 1
	check := func(values ...string) string {
		t.Helper()
		var sel []map[string]any
		for _, v := range values {
			sel = append(sel, map[string]any{"value": v, "text": map[string]any{"type": "plain_text", "text": v}})
		}
		status, _ := e.interact(alice, false, map[string]any{"action_id": "home_rules", "type": "checkboxes", "selected_options": sel})
		require.Equal(t, http.StatusOK, status)
		n++
		return e.home(alice, n)
	}
	for _, values := range [][]string{
		{"calendar"}, {"calendar", "unanswered"}, {"calendar", "unanswered", "maybe"},
		{"unanswered", "maybe", "alone"}, {"unanswered", "maybe", "alone", "nolink"},
		{"maybe", "nolink"}, {},
	} {
		check(values...)
		got := checkedRules(t, e, alice)
		slices.Sort(got)
		want := slices.Clone(values)
		slices.Sort(want)
		assert.Equal(t, want, got, "checked after checking %v", values)
		s := e.subs()[0]
		assert.Equal(t, slices.Contains(values, "calendar"), s.OnCalendar, "calendar reminders after %v", values)
		for _, k := range meetingbot.Skips {
			assert.Equal(t, slices.Contains(values, string(k)), s.Rules.Has(k), "%s after %v", k, values)
		}
	}
	assert.Equal(t, []time.Duration{10 * time.Minute, time.Minute}, sortedDesc(e.subs()[0].Offsets), "the offsets stay")

	e.command(alice, eng, "hours 09:00-18:00 mon-fri")
	e.openHome(alice)
	n++
	home := e.home(alice, n)
	assert.Contains(t, home, "*Working hours:* 09:00-18:00 mon-fri (Europe/Berlin)")
	e.interact(alice, false, map[string]any{"action_id": "home_hours_off", "type": "button", "value": "off"})
	n++
	home = e.home(alice, n)
	assert.Contains(t, home, "*Working hours:* none")
	assert.Nil(t, e.subs()[0].Rules.Hours)
}

func sortedDesc(d []time.Duration) []time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	slices.Reverse(s)
	return s
}
