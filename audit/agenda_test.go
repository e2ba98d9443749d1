package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/audit"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// The audit covers the daily agendas: per person and local day, an
// agenda was due when the day has meetings, and it finds the agendas in
// the DM: one on time (delivered), one sent twice (duplicated), one never
// sent (missing, with the ledger's reason), a day without meetings
// neither expected nor sent.
func TestAuditCoversAgendas(t *testing.T) {
	e := newEnv(t)
	e.srv.SetProfile("U0ALICE001", slacktest.Profile{TZ: "Asia/Seoul"})
	seoul, err := time.LoadLocation("Asia/Seoul")
	require.NoError(t, err)
	local := func(d, hh, mm int) time.Time { return time.Date(2026, 3, 2+d, hh, mm, 0, 0, seoul) }
	ctx := context.Background()
	require.NoError(t, e.store.PutSlackSettings(ctx, meetingbot.SlackSettings{
		UserID: "U0ALICE001", Agenda: "08:00", TZ: "Asia/Seoul", UpdatedAt: local(-1, 20, 0),
	}))
	for _, d := range []int{0, 1, 3} { // day 2 has no meetings
		start := local(d, 10, 0)
		ev := calendartest.NewEvent("m"+start.Format("0102"), "Standup", start, start.Add(15*time.Minute))
		e.cal.put("alice@example.com", ev)
	}
	send := func(d int, when time.Time, record bool) {
		a := meetingbot.Agenda{User: "U0ALICE001", Calendar: "alice@example.com", Date: local(d, 0, 0).Format(time.DateOnly), Zone: seoul,
			At: local(d, 8, 0), Meetings: []meetingbot.Meeting{meeting("m", "Standup", local(d, 10, 0))}}
		en := meetingbot.Entry{Subscription: meetingbot.AgendaSubscription(a.User), Key: a.Key(), Start: local(d, 0, 0).UTC(), TriggerAt: a.At.UTC()}
		if record {
			_, _, err := e.store.Claim(ctx, en, when, when.Add(time.Minute))
			require.NoError(t, err)
		}
		e.clock.Set(when)
		rc, err := e.slack.NotifyAgenda(ctx, a)
		require.NoError(t, err)
		if record {
			e.record(en, meetingbot.Sent, "", "", rc, when)
		}
	}
	send(0, local(0, 8, 0), true)  // on time
	send(1, local(1, 8, 0), true)  // and again after a crash:
	send(1, local(1, 8, 1), false) // a duplicate
	en := meetingbot.Entry{Subscription: meetingbot.AgendaSubscription("U0ALICE001"), Key: meetingbot.AgendaKey("U0ALICE001", "2026-03-05"),
		Start: local(3, 0, 0).UTC(), TriggerAt: local(3, 8, 0).UTC()}
	_, _, err = e.store.Claim(ctx, en, local(3, 13, 0), local(3, 13, 1))
	require.NoError(t, err)
	e.record(en, meetingbot.Skipped, meetingbot.ReasonAfterNoon, "not sent: the bot was down from 08:00 until past 12:00", meetingbot.Receipt{}, local(3, 13, 0))

	in := e.input(local(0, 0, 0), local(4, 0, 0), local(4, 0, 0))
	in.Subscriptions = nil
	in.Agendas = &audit.AgendaDeps{Settings: e.store, Slack: e.slack, Source: e.cal.src}
	r, err := audit.Reconcile(ctx, in)
	require.NoError(t, err)
	require.Len(t, r.Subscriptions, 1)
	sr := r.Subscriptions[0]
	assert.Empty(t, sr.Error)
	assert.Equal(t, "agenda:U0ALICE001", sr.Subscription)
	assert.Equal(t, audit.FromSlack, sr.CountedFrom)
	assert.Equal(t, 3, sr.Expected, "expected: the three days with meetings")
	keys := func(items []audit.Item) []string {
		var out []string
		for _, it := range items {
			out = append(out, it.Key)
		}
		return out
	}
	assert.Equal(t, []string{"agenda:U0ALICE001:2026-03-02"}, keys(sr.Delivered), "delivered")
	assert.Equal(t, []string{"agenda:U0ALICE001:2026-03-03"}, keys(sr.Duplicated), "duplicated")
	assert.Equal(t, []string{"agenda:U0ALICE001:2026-03-05"}, keys(sr.Missing), "missing")
	require.Len(t, sr.Missing, 1)
	assert.Contains(t, sr.Missing[0].Reason, "skipped: not sent: the bot was down")
	assert.Empty(t, sr.Unexpected)
	assert.True(t, r.Problems())
}
