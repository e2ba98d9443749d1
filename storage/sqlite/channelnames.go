package sqlite

import (
	"context"
	"fmt"
	"time"
)

// The workspace's channels by name (migration 008), as Slack's
// conversations.list last listed them: a #name destination resolves from
// here after a restart, rather than by listing every channel of a large
// workspace again.

// ChannelNames returns the channel names kept, each with its channel's ID.
func (s *Store) ChannelNames(ctx context.Context) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, id FROM slack_channel_names`)
	if err != nil {
		return nil, fmt.Errorf("storage: channel names: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, id string
		if err := rows.Scan(&name, &id); err != nil {
			return nil, fmt.Errorf("storage: channel names: %w", err)
		}
		out[name] = id
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: channel names: %w", err)
	}
	return out, nil
}

// PutChannelNames keeps names (name to channel ID), which a listing found
// at seen, replacing what was kept of the same names.
func (s *Store) PutChannelNames(ctx context.Context, names map[string]string, seen time.Time) error {
	if len(names) == 0 {
		return nil
	}
	s.write.Lock()
	defer s.write.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storage: keep channel names: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO slack_channel_names (name, id, seen_ms) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET id = excluded.id, seen_ms = excluded.seen_ms`)
	if err != nil {
		return fmt.Errorf("storage: keep channel names: %w", err)
	}
	defer stmt.Close()
	for name, id := range names {
		if _, err := stmt.ExecContext(ctx, name, id, ms(seen)); err != nil {
			return fmt.Errorf("storage: keep channel names: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("storage: keep channel names: %w", err)
	}
	return nil
}

// ForgetChannelNames forgets the names last found before before, which a
// listing that began then and ended did not find, and name, unless it is
// empty: a name whose channel Slack no longer knows at its ID.
func (s *Store) ForgetChannelNames(ctx context.Context, before time.Time, name string) error {
	s.write.Lock()
	defer s.write.Unlock()
	if _, err := s.db.ExecContext(ctx, `DELETE FROM slack_channel_names WHERE seen_ms < ? OR name = ?`, ms(before), name); err != nil {
		return fmt.Errorf("storage: forget channel names: %w", err)
	}
	return nil
}
