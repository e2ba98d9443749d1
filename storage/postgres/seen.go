package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Remember records key until expires and reports whether it was new:
// false when key is recorded already, by any replica, with an expiry
// after now. A key whose expiry has passed counts as new, and is recorded
// again; keys past their expiry are forgotten on the way. Self-service
// records in it the signatures of Slack's requests it verified and the
// event IDs it handled, so that no replica takes either twice.
//
// The statement is not retried after a lost connection, unlike the
// store's other writes: a first attempt that committed would make the
// retry answer false, and refuse the request it recorded.
func (s *Store) Remember(ctx context.Context, key string, now, expires time.Time) (bool, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	if _, err := s.pool.Exec(ctx, `DELETE FROM slack_seen WHERE expires <= $1`, ts(now)); err != nil {
		return false, fmt.Errorf("postgres: remember a key: %w", s.lost(err))
	}
	var one int
	err := s.pool.QueryRow(ctx, `INSERT INTO slack_seen (key, expires) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET expires = excluded.expires WHERE slack_seen.expires <= $3
		RETURNING 1`, key, ts(expires), ts(now)).Scan(&one)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("postgres: remember a key: %w", s.lost(err))
	}
	return true, nil
}
