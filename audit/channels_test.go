package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/audit"
)

// The audit covers a channel's change notices and agendas: each one the
// ledger says was due is judged against the channel's messages: a
// notice sent (delivered), one sent twice (duplicated), an agenda never
// posted (missing), a day with nothing (not due).
func TestAuditCoversAChannelsNoticesAndAgendas(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const channel = "C0STANDUP1"
	sub := meetingbot.SlackSubscription{ID: "slack:team@example.com=" + channel, Kind: meetingbot.SlackChannel, CalendarID: "team@example.com",
		Destination: channel, CreatedBy: "U0ADMIN01", CreatedAt: at(8, 0, 0),
		Following: meetingbot.Following{ChangesSince: at(8, 0, 0), Daily: "09:00", Zone: "UTC"}}
	_, _, err := e.store.AddSlackSubscription(ctx, sub)
	require.NoError(t, err)
	notice := func(id string, due time.Time) (meetingbot.Notice, meetingbot.Entry) {
		m := meeting(id, "Event "+id, due.Add(3*time.Hour))
		n := meetingbot.Notice{Key: meetingbot.FeedKey(id, meetingbot.Meeting{}, m, due), Subscription: sub.Subscription(), Changes: []meetingbot.Change{meetingbot.ChangeAdded}, Now: m, At: due}
		en := n.Entry()
		_, _, err := e.store.Claim(ctx, en, due, due.Add(time.Minute))
		require.NoError(t, err)
		return n, en
	}
	post := func(n meetingbot.Notice, when time.Time) meetingbot.Receipt {
		e.clock.Set(when)
		rc, err := e.slack.NotifyChange(ctx, n)
		require.NoError(t, err)
		return rc
	}
	one, en := notice("one", at(9, 30, 0))
	e.record(en, meetingbot.Sent, "", "", post(one, at(9, 30, 1)), at(9, 30, 1))
	twice, en := notice("twice", at(10, 0, 0))
	post(twice, at(10, 0, 1)) // a crash between Slack and the ledger, and a lookup that failed
	e.record(en, meetingbot.Sent, meetingbot.ReasonResent, "resent", post(twice, at(10, 0, 2)), at(10, 0, 2))

	agendaOf := func(date string, day time.Time) meetingbot.Entry {
		a := meetingbot.ChannelAgenda{Subscription: sub.Subscription(), Date: date, Zone: time.UTC, At: day.Add(9 * time.Hour), Start: day, End: day.Add(24 * time.Hour)}
		en := a.Entry()
		_, _, err := e.store.Claim(ctx, en, a.At, a.At.Add(time.Minute))
		require.NoError(t, err)
		return en
	}
	en = agendaOf(day.Format(time.DateOnly), day)
	e.record(en, meetingbot.Failed, meetingbot.ReasonPermanent, "not_in_channel", meetingbot.Receipt{}, at(9, 0, 0))

	in := e.input(day, day.Add(24*time.Hour), at(14, 0, 0))
	in.Subscriptions = nil
	in.Channels = e.store
	r, err := audit.Reconcile(ctx, in)
	require.NoError(t, err)
	require.Len(t, r.Subscriptions, 2, "the channel's notices and its agendas")
	byID := map[string]audit.SubReport{}
	for _, sr := range r.Subscriptions {
		byID[sr.Subscription] = sr
	}
	feed := byID[meetingbot.FeedSubscription(sub.ID)]
	assert.Equal(t, audit.FromSlack, feed.CountedFrom)
	assert.Equal(t, 2, feed.Expected)
	require.Len(t, feed.Delivered, 1)
	assert.Equal(t, one.Key, feed.Delivered[0].Key)
	require.Len(t, feed.Duplicated, 1)
	assert.Equal(t, twice.Key, feed.Duplicated[0].Key)
	agendas := byID[meetingbot.ChannelAgendaSubscription(sub.ID)]
	assert.Equal(t, 1, agendas.Expected)
	assert.Len(t, agendas.Missing, 1, "the agenda that failed is missing")
}
