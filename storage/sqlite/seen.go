package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Remember records key until expires and reports whether it was new:
// false when key is recorded already with an expiry after now. A key
// whose expiry has passed counts as new, and is recorded again. Keys past
// their expiry are forgotten on the way, so the table holds only what is
// live. Self-service records in it the signatures of Slack's requests it
// verified and the event IDs it handled, so that neither is taken twice,
// across a restart too.
func (s *Store) Remember(ctx context.Context, key string, now, expires time.Time) (bool, error) {
	s.write.Lock()
	defer s.write.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("storage: remember a key: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM slack_seen WHERE expires_ms <= ?`, now.UnixMilli()); err != nil {
		return false, fmt.Errorf("storage: remember a key: %w", err)
	}
	var one int
	err = tx.QueryRowContext(ctx, `INSERT INTO slack_seen (key, expires_ms) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET expires_ms = excluded.expires_ms WHERE slack_seen.expires_ms <= ?
		RETURNING 1`, key, expires.UnixMilli(), now.UnixMilli()).Scan(&one)
	first := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("storage: remember a key: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("storage: remember a key: %w", err)
	}
	return first, nil
}
