package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The workspace's channels by name (migration 008), as SQLite's: every
// replica resolves a #name destination from here, rather than each
// listing every channel of a large workspace.

// ChannelNames returns the channel names kept, each with its channel's ID.
func (s *Store) ChannelNames(ctx context.Context) (map[string]string, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT name, id FROM slack_channel_names`)
	if err != nil {
		return nil, fmt.Errorf("postgres: channel names: %w", s.lost(err))
	}
	out := map[string]string{}
	var name, id string
	_, err = pgx.ForEachRow(rows, []any{&name, &id}, func() error {
		out[name] = id
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: channel names: %w", s.lost(err))
	}
	return out, nil
}

// PutChannelNames keeps names (name to channel ID), which a listing found
// at seen, replacing what was kept of the same names. It is one statement,
// safe to run again after a lost connection.
func (s *Store) PutChannelNames(ctx context.Context, names map[string]string, seen time.Time) error {
	if len(names) == 0 {
		return nil
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	ns, ids := make([]string, 0, len(names)), make([]string, 0, len(names))
	for n, id := range names {
		ns, ids = append(ns, n), append(ids, id)
	}
	_, err := s.exec(ctx, `INSERT INTO slack_channel_names (name, id, seen)
		SELECT n, i, $3 FROM unnest($1::text[], $2::text[]) AS t (n, i)
		ON CONFLICT (name) DO UPDATE SET id = excluded.id, seen = excluded.seen`, ns, ids, ts(seen))
	if err != nil {
		return fmt.Errorf("postgres: keep channel names: %w", s.lost(err))
	}
	return nil
}

// ForgetChannelNames forgets the names last found before before, which a
// listing that began then and ended did not find, and name, unless it is
// empty: a name whose channel Slack no longer knows at its ID.
func (s *Store) ForgetChannelNames(ctx context.Context, before time.Time, name string) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	if _, err := s.exec(ctx, `DELETE FROM slack_channel_names WHERE seen < $1 OR name = $2`, ts(before), name); err != nil {
		return fmt.Errorf("postgres: forget channel names: %w", s.lost(err))
	}
	return nil
}
