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

// The audit covers the notices of new invitations: each one the ledger
// says was due is judged against the DMs in the person's history, as a
// reminder: one sent (delivered), one in a digest (delivered), one sent
// twice after a crash (duplicated), one never sent (missing); one
// skipped because it was made before notices were on is not due.
func TestAuditCoversNotices(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	user := "U0ALICE001"
	require.NoError(t, e.store.PutInviteSettings(ctx, meetingbot.InviteSettings{UserID: user, On: true, Since: at(8, 0, 0), UpdatedAt: at(8, 0, 0)}))
	inv := func(id string, due time.Time) (meetingbot.Invitation, meetingbot.Entry) {
		i := meetingbot.Invitation{Key: meetingbot.InviteKey(user, id), User: user, Calendar: "alice@example.com", Event: id,
			Meeting: meeting(id, "Invitation "+id, due.Add(3*time.Hour)), At: due}
		en := meetingbot.Entry{Subscription: meetingbot.InviteSubscription(user), Key: i.Key, EventID: id, Start: i.Meeting.Start, TriggerAt: due}
		_, _, err := e.store.Claim(ctx, en, due, due.Add(time.Minute))
		require.NoError(t, err)
		return i, en
	}
	post := func(i meetingbot.Invitation, when time.Time) meetingbot.Receipt {
		e.clock.Set(when)
		rc, err := e.slack.NotifyInvite(ctx, i)
		require.NoError(t, err)
		return rc
	}
	one, en := inv("one", at(9, 0, 0))
	e.record(en, meetingbot.Sent, "", "", post(one, at(9, 0, 1)), at(9, 0, 1))
	twice, en := inv("twice", at(10, 0, 0))
	post(twice, at(10, 0, 1)) // a crash between Slack and the ledger, and a lookup that failed
	e.record(en, meetingbot.Sent, meetingbot.ReasonResent, "resent", post(twice, at(10, 0, 2)), at(10, 0, 2))
	_, en = inv("never", at(11, 0, 0))
	e.record(en, meetingbot.Failed, meetingbot.ReasonPermanent, "channel_not_found", meetingbot.Receipt{}, at(11, 0, 0))
	_, en = inv("before", at(11, 30, 0))
	e.record(en, meetingbot.Skipped, meetingbot.ReasonInvitedBefore, "made before notices were on", meetingbot.Receipt{}, at(11, 30, 0))
	var digest []meetingbot.Invitation
	var entries []meetingbot.Entry
	for _, id := range []string{"d1", "d2"} {
		i, en := inv(id, at(12, 0, 0))
		digest, entries = append(digest, i), append(entries, en)
	}
	e.clock.Set(at(12, 0, 1))
	rc, err := e.slack.NotifyInviteDigest(ctx, digest)
	require.NoError(t, err)
	for _, en := range entries {
		e.record(en, meetingbot.Sent, meetingbot.ReasonDigest, "sent in one message", rc, at(12, 0, 1))
	}

	in := e.input(day, day.Add(24*time.Hour), at(14, 0, 0))
	in.Subscriptions = nil
	in.Notices = e.store
	r, err := audit.Reconcile(ctx, in)
	require.NoError(t, err)
	require.Len(t, r.Subscriptions, 1)
	sr := r.Subscriptions[0]
	assert.Empty(t, sr.Error)
	assert.Empty(t, sr.SlackError)
	assert.Equal(t, meetingbot.InviteSubscription(user), sr.Subscription)
	assert.Equal(t, audit.FromSlack, sr.CountedFrom)
	assert.Equal(t, 5, sr.Expected, "due: all but the one made before notices were on")
	keys := func(items []audit.Item) []string {
		var out []string
		for _, it := range items {
			out = append(out, it.Key)
		}
		return out
	}
	assert.ElementsMatch(t, []string{one.Key, digest[0].Key, digest[1].Key}, keys(sr.Delivered), "delivered")
	assert.Equal(t, []string{twice.Key}, keys(sr.Duplicated), "duplicated")
	assert.Equal(t, []string{meetingbot.InviteKey(user, "never")}, keys(sr.Missing), "missing")
	assert.Empty(t, sr.Unexpected)
	assert.True(t, r.Problems())
}
