package daemon

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
)

type quotaShares []float64

func (q *quotaShares) ShareQuotas(f float64) { *q = append(*q, f) }

// A replica spends the share of the Calendar quotas that it holds of the
// subscriptions (5 % at least), and keeps push channels on the calendars
// it holds and on those no subscription shared names; before its first
// share it keeps none, and the first share asks for the channels at once.
func TestReplicaShare(t *testing.T) {
	subs := []meetingbot.Subscription{
		{ID: "a", CalendarID: "alice@example.com"},
		{ID: "b", CalendarID: "bob@example.com"},
		{ID: "c", CalendarID: "carol@example.com"},
		{ID: "d", CalendarID: "dan@example.com"},
	}
	var mine []meetingbot.Subscription
	share := func(context.Context, []meetingbot.Subscription) ([]meetingbot.Subscription, error) { return mine, nil }
	var quotas quotaShares
	held := &heldCalendars{}
	firsts := 0
	held.onFirst(func() { firsts++ })
	wrapped := replicaShare(share, &quotas, held)

	assert.False(t, held.watch("alice@example.com"), "a channel kept before the first share")
	assert.False(t, held.watch("notices@example.com"), "a channel kept before the first share")

	mine = subs[:1]
	_, err := wrapped(t.Context(), subs)
	require.NoError(t, err)
	mine = nil
	_, err = wrapped(t.Context(), subs)
	require.NoError(t, err)
	assert.Equal(t, quotaShares{0.25, minQuotaShare}, quotas, "shares of the quotas: a quarter held, then none")
	assert.Equal(t, 1, firsts, "channels asked for at once, after the first share only")

	mine = subs[1:3]
	_, err = wrapped(t.Context(), subs)
	require.NoError(t, err)
	for cal, want := range map[string]bool{
		"alice@example.com": false, "bob@example.com": true, "carol@example.com": true, "dan@example.com": false,
		"notices@example.com": true, // no subscription shared names it
	} {
		assert.Equal(t, want, held.watch(cal), "channel of %s kept", cal)
	}
}
