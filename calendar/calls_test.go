package calendar_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	gcal "google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

// Every kind of Calendar request the bot makes reaches Observe, which the
// metric meetingbot_calendar_calls_total counts and the daily projection
// sums: lists (sweeps, syncs), gets (the check of one meeting, the read
// before an answer), instances (a series re-read), watches, renewals (a
// watch replacing a live channel), stops and patches (an answer to an
// invitation).
func TestEveryCallIsObservedByKind(t *testing.T) {
	srv := newServer(t)
	start := time.Now().Add(time.Hour).Truncate(time.Minute)
	invite(t, srv, "plan1", start)
	series := calendartest.NewEvent("weekly", "Weekly", start, start.Add(30*time.Minute))
	series.Recurrence = []string{"RRULE:FREQ=WEEKLY;COUNT=3"}
	if err := srv.Put(alice, series); err != nil {
		t.Fatal(err)
	}
	tok := srv.Grant(alice, gcal.CalendarEventsReadonlyScope, meetingbot.ScopeCalendarEvents)
	acc := &fakeAccounts{sources: map[string]oauth2.TokenSource{alice: oauth2.StaticTokenSource(tok)}}
	src, rec := newSource(t, srv, func(c *calendar.Config) { c.Accounts = acc })
	rcv := newNotifyReceiver(t, srv)
	ctx := t.Context()

	if _, err := src.Meetings(ctx, mine(alice), time.Now(), start.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Meeting(ctx, mine(alice), "plan1"); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Instances(ctx, asOwner(alice), "weekly", calendar.Window{From: time.Now(), Horizon: start.Add(30 * 24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	first, err := src.Watch(ctx, asOwner(alice), "chan-1", "s3cret-token", rcv.address(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Watch(meetingbot.WithRenewal(ctx), asOwner(alice), "chan-2", "s3cret-token", rcv.address(), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := src.StopChannel(ctx, first); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Respond(ctx, asOwner(alice), "plan1", meetingbot.ResponseAccepted); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range rec.observed() {
		call, _, _ := strings.Cut(o, ":")
		if !slices.Contains(kinds, call) {
			kinds = append(kinds, call)
		}
	}
	want := []string{"events.list", "events.get", "events.instances", "events.watch", "events.watch.renewal", "channels.stop", "events.patch"}
	if !slices.Equal(kinds, want) {
		t.Errorf("calls observed = %v, want %v", kinds, want)
	}
}
