package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/meetingbot/meetingbot"
)

// InviteSettingsOf returns userID's invitation notices settings, and
// whether they set any (off by default).
func (s *Store) InviteSettingsOf(ctx context.Context, userID string) (meetingbot.InviteSettings, bool, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	set := meetingbot.InviteSettings{UserID: userID}
	err := s.pool.QueryRow(ctx, `SELECT enabled, since, updated_at FROM invite_settings WHERE user_id = $1`, userID).Scan(&set.On, &set.Since, &set.UpdatedAt)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return meetingbot.InviteSettings{UserID: userID}, false, nil
	case err != nil:
		return meetingbot.InviteSettings{UserID: userID}, false, fmt.Errorf("postgres: invitation notices of %s: %w", userID, s.lost(err))
	}
	set.Since, set.UpdatedAt = set.Since.UTC(), set.UpdatedAt.UTC()
	return set, true, nil
}

// InviteSettingsOn returns the settings of everyone whose invitation
// notices are on, by user.
func (s *Store) InviteSettingsOn(ctx context.Context) ([]meetingbot.InviteSettings, error) {
	return s.inviteSettings(ctx, `WHERE enabled`)
}

// InviteSettings returns the settings of everyone who ever turned
// invitation notices on, on or off now, by user: whose notices bot audit
// looks at.
func (s *Store) InviteSettings(ctx context.Context) ([]meetingbot.InviteSettings, error) {
	return s.inviteSettings(ctx, ``)
}

func (s *Store) inviteSettings(ctx context.Context, where string) ([]meetingbot.InviteSettings, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT user_id, enabled, since, updated_at FROM invite_settings `+where+` ORDER BY user_id`)
	if err != nil {
		return nil, fmt.Errorf("postgres: invitation notices: %w", s.lost(err))
	}
	defer rows.Close()
	var out []meetingbot.InviteSettings
	for rows.Next() {
		var set meetingbot.InviteSettings
		if err := rows.Scan(&set.UserID, &set.On, &set.Since, &set.UpdatedAt); err != nil {
			return nil, fmt.Errorf("postgres: invitation notices: %w", err)
		}
		set.Since, set.UpdatedAt = set.Since.UTC(), set.UpdatedAt.UTC()
		out = append(out, set)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: invitation notices: %w", s.lost(err))
	}
	return out, nil
}

// PutInviteSettings stores set.
func (s *Store) PutInviteSettings(ctx context.Context, set meetingbot.InviteSettings) error {
	if set.UserID == "" {
		return fmt.Errorf("postgres: invitation notices: no user: %w", meetingbot.ErrInvalid)
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	if _, err := s.exec(ctx, `INSERT INTO invite_settings (user_id, enabled, since, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (user_id) DO UPDATE SET enabled = excluded.enabled, since = excluded.since, updated_at = excluded.updated_at`,
		set.UserID, set.On, milli(set.Since), milli(set.UpdatedAt)); err != nil {
		return fmt.Errorf("postgres: put invitation notices of %s: %w", set.UserID, err)
	}
	return nil
}
