package agenda_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/agenda"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

const teamCal = "team@group.calendar.google.com"

// channelEngine is one process's channel agendas over e's store, its
// Calendar and Slack emulators, with sets as the channels' settings.
func (e *env) channelEngine(sets ...agenda.ChannelSettings) *agenda.ChannelEngine {
	t := e.t
	key := filepath.Join(t.TempDir(), "key.json")
	require.NoError(t, os.WriteFile(key, e.cal.ServiceAccountJSON(), 0o600))
	source, err := calendar.New(context.Background(), calendar.Config{
		CredentialsFile: key, Endpoint: e.cal.Endpoint(), HTTPClient: e.cal.Client(), Sleep: e.clock.Sleep,
	})
	require.NoError(t, err)
	slack := notify.New(notify.Config{Token: slacktest.Token, APIURL: e.slack.URL(), Now: e.clock.Now, Sleep: e.clock.Sleep, CallTimeout: 2 * time.Second})
	list := func(context.Context) ([]agenda.ChannelSettings, error) { return sets, nil }
	en, err := agenda.NewChannels(list, source, slack, e.store, agenda.Options{Interval: interval, Clock: e.clock})
	require.NoError(t, err)
	return en
}

// TestChannelAgendasAcrossDSTInTwoZones: a daily agenda at 09:00 in New
// York and a weekly one on Mondays at 09:00 in Berlin go out at 09:00
// local on each day, the days the clocks change and those after
// included, once each whatever the processes; a day with nothing posts
// nothing.
func TestChannelAgendasAcrossDSTInTwoZones(t *testing.T) {
	ny, berlin := zone(t, "America/New_York"), zone(t, "Europe/Berlin")
	e := newEnv(t, time.Date(2026, 10, 18, 12, 0, 0, 0, time.UTC))
	e.cal.AddCalendar(teamCal)
	e.slack.AddChannel(slacktest.Channel{ID: "C0TEAM0001", Name: "team", Member: true})
	e.slack.AddChannel(slacktest.Channel{ID: "C0BERLIN01", Name: "berlin", Member: true})
	for _, d := range []int{19, 21, 26, 31} {
		e.meeting(teamCal, fmt.Sprintf("oct%d", d), time.Date(2026, 10, d, 10, 0, 0, 0, ny), 30*time.Minute)
	}
	for _, d := range []int{1, 2} {
		e.meeting(teamCal, fmt.Sprintf("nov%d", d), time.Date(2026, 11, d, 10, 0, 0, 0, ny), 30*time.Minute)
	}
	nyDaily := agenda.ChannelSettings{Subscription: meetingbot.Subscription{ID: "slack:team=C0TEAM0001", CalendarID: teamCal, Destination: "C0TEAM0001"},
		Daily: "09:00", Zone: "America/New_York"}
	berlinWeekly := agenda.ChannelSettings{Subscription: meetingbot.Subscription{ID: "slack:team=C0BERLIN01", CalendarID: teamCal, Destination: "C0BERLIN01"},
		Weekly: "mon 09:00", Zone: "Europe/Berlin"}
	a, b := e.channelEngine(nyDaily, berlinWeekly), e.channelEngine(nyDaily, berlinWeekly)
	for end := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC); e.clock.Now().Before(end); e.clock.Advance(interval) {
		require.NoError(t, a.Tick(context.Background()))
		require.NoError(t, b.Tick(context.Background()))
	}
	channelAgendas := func() []slacktest.Message {
		var out []slacktest.Message
		for _, m := range e.slack.Messages() {
			if m.Channel == "C0TEAM0001" || m.Channel == "C0BERLIN01" {
				out = append(out, m)
			}
		}
		return out
	}
	var got []string
	for _, m := range channelAgendas() {
		loc := ny
		if m.Channel == "C0BERLIN01" {
			loc = berlin
		}
		got = append(got, m.Channel+" "+m.Posted.In(loc).Format("2006-01-02 15:04:05 MST"))
	}
	want := []string{
		"C0TEAM0001 2026-10-19 09:00:00 EDT", "C0BERLIN01 2026-10-19 09:00:00 CEST",
		"C0TEAM0001 2026-10-21 09:00:00 EDT",
		"C0TEAM0001 2026-10-26 09:00:00 EDT", "C0BERLIN01 2026-10-26 09:00:00 CET", // Berlin fell back on the 25th
		"C0TEAM0001 2026-10-31 09:00:00 EDT",
		"C0TEAM0001 2026-11-01 09:00:00 EST", // New York falls back that day, at 02:00
		"C0TEAM0001 2026-11-02 09:00:00 EST", "C0BERLIN01 2026-11-02 09:00:00 CET",
	}
	assert.ElementsMatch(t, want, got, "agendas posted")
	weeks := 0
	for _, m := range channelAgendas() {
		if m.Channel == "C0BERLIN01" && m.Posted.In(berlin).Day() == 26 {
			weeks++
			assert.True(t, strings.HasPrefix(m.Text, teamCal+" · The week from "), "weekly agenda %q", m.Text)
			assert.Contains(t, m.Text, ": 3 meetings", "the week from Monday 26 October lists the 26th, the 31st and 1 November")
		}
	}
	assert.Equal(t, 1, weeks, "one weekly agenda on Monday 26 October")
	en, err := e.store.Entries(context.Background(), meetingbot.ChannelAgendaSubscription(nyDaily.Subscription.ID),
		[]string{meetingbot.ChannelAgendaKey(nyDaily.Subscription.ID, "2026-10-20", false)})
	require.NoError(t, err)
	assert.Equal(t, meetingbot.ReasonNoMeetings, en[meetingbot.ChannelAgendaKey(nyDaily.Subscription.ID, "2026-10-20", false)].Code, "a day with nothing is skipped")
}
