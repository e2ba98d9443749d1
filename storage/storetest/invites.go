package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
)

// InviteStore is what both backends provide for invitation notices
// (migration 016): who turned them on.
type InviteStore interface {
	InviteSettingsOf(ctx context.Context, userID string) (meetingbot.InviteSettings, bool, error)
	InviteSettingsOn(ctx context.Context) ([]meetingbot.InviteSettings, error)
	InviteSettings(ctx context.Context) ([]meetingbot.InviteSettings, error)
	PutInviteSettings(ctx context.Context, set meetingbot.InviteSettings) error
}

// InviteOpener opens an InviteStore on one database, as another process
// would.
type InviteOpener func(t *testing.T) InviteStore

// RunInvites runs the contract of migration 016; fresh is as Run's.
func RunInvites(t *testing.T, fresh func(t *testing.T) InviteOpener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open InviteOpener)
	}{
		{"InviteSettingsOffByDefaultAndSurviveRestart", testInviteSettings},
		{"InviteSettingsOnListsOnlyThoseOn", testInviteSettingsOn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, fresh(t))
		})
	}
}

func testInviteSettings(t *testing.T, open InviteOpener) {
	ctx := t.Context()
	s := open(t)
	got, ok, err := s.InviteSettingsOf(ctx, "U1")
	require.NoError(t, err)
	assert.False(t, ok, "InviteSettingsOf(U1) of a new store: found")
	assert.Equal(t, meetingbot.InviteSettings{UserID: "U1"}, got, "the settings of someone who set none: off")

	on := time.Date(2026, 11, 30, 8, 50, 0, 123e6, time.UTC)
	set := meetingbot.InviteSettings{UserID: "U1", On: true, Since: on, UpdatedAt: on}
	require.NoError(t, s.PutInviteSettings(ctx, set))
	got, ok, err = open(t).InviteSettingsOf(ctx, "U1")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, set, got, "InviteSettingsOf after a restart, by another process")

	off := set
	off.On, off.UpdatedAt = false, on.Add(time.Hour)
	require.NoError(t, s.PutInviteSettings(ctx, off))
	got, _, err = s.InviteSettingsOf(ctx, "U1")
	require.NoError(t, err)
	assert.Equal(t, off, got, "InviteSettingsOf after turning them off: since is kept")
	assert.ErrorIs(t, s.PutInviteSettings(ctx, meetingbot.InviteSettings{On: true}), meetingbot.ErrInvalid, "PutInviteSettings without a user")
}

func testInviteSettingsOn(t *testing.T, open InviteOpener) {
	ctx := t.Context()
	s := open(t)
	at := time.Date(2026, 11, 30, 8, 50, 0, 0, time.UTC)
	for _, set := range []meetingbot.InviteSettings{
		{UserID: "U3", On: true, Since: at, UpdatedAt: at},
		{UserID: "U1", On: true, Since: at.Add(time.Minute), UpdatedAt: at.Add(time.Minute)},
		{UserID: "U2", On: false, Since: at, UpdatedAt: at.Add(time.Hour)},
	} {
		require.NoError(t, s.PutInviteSettings(ctx, set))
	}
	got, err := s.InviteSettingsOn(ctx)
	require.NoError(t, err)
	var users []string
	for _, g := range got {
		users = append(users, g.UserID)
		assert.True(t, g.On, "InviteSettingsOn lists %s as off", g.UserID)
	}
	assert.Equal(t, []string{"U1", "U3"}, users, "InviteSettingsOn: those on, by user")
	assert.Equal(t, at.Add(time.Minute), got[0].Since, "U1's since")

	all, err := s.InviteSettings(ctx)
	require.NoError(t, err)
	users = nil
	for _, g := range all {
		users = append(users, g.UserID)
	}
	assert.Equal(t, []string{"U1", "U2", "U3"}, users, "InviteSettings: everyone who set them, by user")
	assert.False(t, all[1].On, "U2's notices in InviteSettings")
}
