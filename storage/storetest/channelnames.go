package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testChannelNames: the channel names a listing found are there for every
// process and after a restart; a later listing replaces an ID and, once
// ended, forgets the names it did not find; one name is forgotten alone.
func testChannelNames(t *testing.T, open Opener) {
	ctx := t.Context()
	a, b := open(t), open(t)
	got, err := a.ChannelNames(ctx)
	require.NoError(t, err)
	assert.Empty(t, got, "ChannelNames before any listing")

	first := created
	require.NoError(t, a.PutChannelNames(ctx, map[string]string{"eng": "C0ENG", "ops": "C0OPS", "old": "C0OLD"}, first))
	require.NoError(t, a.PutChannelNames(ctx, nil, first))
	require.NoError(t, a.Close())
	got, err = b.ChannelNames(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"eng": "C0ENG", "ops": "C0OPS", "old": "C0OLD"}, got, "ChannelNames in another process")

	// A listing an hour on, in two pages: eng now names another channel,
	// old is not found.
	second := first.Add(time.Hour)
	require.NoError(t, b.PutChannelNames(ctx, map[string]string{"eng": "C0NEWENG"}, second))
	require.NoError(t, b.PutChannelNames(ctx, map[string]string{"ops": "C0OPS", "new": "C0NEW"}, second.Add(3*time.Second)))
	require.NoError(t, b.ForgetChannelNames(ctx, second, ""))
	c := open(t)
	got, err = c.ChannelNames(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"eng": "C0NEWENG", "ops": "C0OPS", "new": "C0NEW"}, got, "ChannelNames after the second listing")

	require.NoError(t, c.ForgetChannelNames(ctx, time.Time{}, "ops"))
	got, err = b.ChannelNames(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"eng": "C0NEWENG", "new": "C0NEW"}, got, "ChannelNames after forgetting ops")
}
