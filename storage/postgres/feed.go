package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/meetingbot/meetingbot"
)

// FeedSeen returns what the channel of the notices' pseudo-subscription
// sub (meetingbot.FeedSubscription) was last told of each event, by event
// ID, and when its first reading was taken (zero: none yet).
func (s *Store) FeedSeen(ctx context.Context, sub string) (map[string]meetingbot.Meeting, time.Time, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	var primed time.Time
	err := s.pool.QueryRow(ctx, `SELECT primed_at FROM feed_primed WHERE subscription = $1`, sub).Scan(&primed)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, time.Time{}, nil
	}
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("postgres: feed of %s: %w", sub, s.lost(err))
	}
	rows, err := s.pool.Query(ctx, `SELECT event, meeting::text FROM feed_seen WHERE subscription = $1`, sub)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("postgres: feed of %s: %w", sub, s.lost(err))
	}
	seen := map[string]meetingbot.Meeting{}
	var id, body string
	_, err = pgx.ForEachRow(rows, []any{&id, &body}, func() error {
		var m meetingbot.Meeting
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			return fmt.Errorf("event %s: %w", id, err)
		}
		seen[id] = m
		return nil
	})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("postgres: feed of %s: %w", sub, s.lost(err))
	}
	return seen, primed.UTC(), nil
}

// PutFeedSeen records what the channel of sub now knows: each of put
// replaces the event of its ID, the events of drop leave. primed is when
// its first reading was taken, kept only if none is yet; a zero primed
// with none kept is meetingbot.ErrInvalid.
func (s *Store) PutFeedSeen(ctx context.Context, sub string, primed time.Time, put []meetingbot.Meeting, drop []string) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if !primed.IsZero() {
			if _, err := tx.Exec(ctx, `INSERT INTO feed_primed (subscription, primed_at) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
				sub, primed.UTC().Truncate(time.Millisecond)); err != nil {
				return err
			}
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM feed_primed WHERE subscription = $1`, sub).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: no first reading", meetingbot.ErrInvalid)
		}
		if len(drop) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM feed_seen WHERE subscription = $1 AND event = ANY($2)`, sub, drop); err != nil {
				return err
			}
		}
		for _, m := range put {
			body, err := json.Marshal(m)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO feed_seen (subscription, event, meeting) VALUES ($1, $2, $3)
				ON CONFLICT (subscription, event) DO UPDATE SET meeting = excluded.meeting`, sub, m.ID, string(body)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: feed of %s: %w", sub, s.lost(err))
	}
	return nil
}

// ForgetFeed drops what the channel of sub was told, its first reading
// included: a channel that stops following changes and starts again
// begins from a new first reading.
func (s *Store) ForgetFeed(ctx context.Context, sub string) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, q := range []string{`DELETE FROM feed_seen WHERE subscription = $1`, `DELETE FROM feed_pending WHERE subscription = $1`} {
			if _, err := tx.Exec(ctx, q, sub); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `DELETE FROM feed_primed WHERE subscription = $1`, sub)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: forget feed of %s: %w", sub, s.lost(err))
	}
	return nil
}

// FeedPending returns the notices of sub being posted, by event ID.
func (s *Store) FeedPending(ctx context.Context, sub string) (map[string]meetingbot.FeedPending, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT event, key, meeting::text FROM feed_pending WHERE subscription = $1`, sub)
	if err != nil {
		return nil, fmt.Errorf("postgres: feed pending of %s: %w", sub, s.lost(err))
	}
	out := map[string]meetingbot.FeedPending{}
	var p meetingbot.FeedPending
	var body string
	_, err = pgx.ForEachRow(rows, []any{&p.Event, &p.Key, &body}, func() error {
		got := p
		got.Now = meetingbot.Meeting{}
		if err := json.Unmarshal([]byte(body), &got.Now); err != nil {
			return fmt.Errorf("event %s: %w", p.Event, err)
		}
		out[got.Event] = got
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: feed pending of %s: %w", sub, s.lost(err))
	}
	return out, nil
}

// PutFeedPending records notices of sub about to be posted, each
// replacing the one of its event.
func (s *Store) PutFeedPending(ctx context.Context, sub string, ps []meetingbot.FeedPending) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, p := range ps {
			body, err := json.Marshal(p.Now)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO feed_pending (subscription, event, key, meeting) VALUES ($1, $2, $3, $4)
				ON CONFLICT (subscription, event) DO UPDATE SET key = excluded.key, meeting = excluded.meeting`, sub, p.Event, p.Key, string(body)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: feed pending of %s: %w", sub, s.lost(err))
	}
	return nil
}

// DropFeedPending forgets the notices of sub being posted about events.
func (s *Store) DropFeedPending(ctx context.Context, sub string, events []string) error {
	if len(events) == 0 {
		return nil
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	if _, err := s.exec(ctx, `DELETE FROM feed_pending WHERE subscription = $1 AND event = ANY($2)`, sub, events); err != nil {
		return fmt.Errorf("postgres: feed pending of %s: %w", sub, err)
	}
	return nil
}
