package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/meetingbot/meetingbot"
)

// InviteSettingsOf returns userID's invitation notices settings, and
// whether they set any (off by default).
func (s *Store) InviteSettingsOf(ctx context.Context, userID string) (meetingbot.InviteSettings, bool, error) {
	set := meetingbot.InviteSettings{UserID: userID}
	var on, since, updated int64
	err := s.db.QueryRowContext(ctx, `SELECT enabled, since_ms, updated_ms FROM invite_settings WHERE user_id = ?`, userID).Scan(&on, &since, &updated)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return set, false, nil
	case err != nil:
		return set, false, fmt.Errorf("storage: invitation notices of %s: %w", userID, err)
	}
	set.On, set.Since, set.UpdatedAt = on == 1, fromMS(since), fromMS(updated)
	return set, true, nil
}

// InviteSettingsOn returns the settings of everyone whose invitation
// notices are on, by user.
func (s *Store) InviteSettingsOn(ctx context.Context) ([]meetingbot.InviteSettings, error) {
	return s.inviteSettings(ctx, `WHERE enabled = 1`)
}

// InviteSettings returns the settings of everyone who ever turned
// invitation notices on, on or off now, by user: whose notices bot audit
// looks at.
func (s *Store) InviteSettings(ctx context.Context) ([]meetingbot.InviteSettings, error) {
	return s.inviteSettings(ctx, ``)
}

func (s *Store) inviteSettings(ctx context.Context, where string) ([]meetingbot.InviteSettings, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT user_id, enabled, since_ms, updated_ms FROM invite_settings `+where+` ORDER BY user_id`)
	if err != nil {
		return nil, fmt.Errorf("storage: invitation notices: %w", err)
	}
	defer rows.Close()
	var out []meetingbot.InviteSettings
	for rows.Next() {
		var set meetingbot.InviteSettings
		var on, since, updated int64
		if err := rows.Scan(&set.UserID, &on, &since, &updated); err != nil {
			return nil, fmt.Errorf("storage: invitation notices: %w", err)
		}
		set.On, set.Since, set.UpdatedAt = on == 1, fromMS(since), fromMS(updated)
		out = append(out, set)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: invitation notices: %w", err)
	}
	return out, nil
}

// PutInviteSettings stores set.
func (s *Store) PutInviteSettings(ctx context.Context, set meetingbot.InviteSettings) error {
	if set.UserID == "" {
		return fmt.Errorf("storage: invitation notices: no user: %w", ErrInvalid)
	}
	on := 0
	if set.On {
		on = 1
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO invite_settings (user_id, enabled, since_ms, updated_ms) VALUES (?, ?, ?, ?)
		ON CONFLICT (user_id) DO UPDATE SET enabled = excluded.enabled, since_ms = excluded.since_ms, updated_ms = excluded.updated_ms`,
		set.UserID, on, ms(set.Since), ms(set.UpdatedAt))
	if err != nil {
		return fmt.Errorf("storage: put invitation notices of %s: %w", set.UserID, err)
	}
	return nil
}
