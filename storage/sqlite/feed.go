package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/meetingbot/meetingbot"
)

// FeedSeen returns what the channel of the notices' pseudo-subscription
// sub (meetingbot.FeedSubscription) was last told of each event, by event
// ID, and when its first reading was taken (zero: none yet).
func (s *Store) FeedSeen(ctx context.Context, sub string) (map[string]meetingbot.Meeting, time.Time, error) {
	var primed int64
	err := s.db.QueryRowContext(ctx, `SELECT primed_ms FROM feed_primed WHERE subscription = ?`, sub).Scan(&primed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, time.Time{}, nil
	}
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("storage: feed of %s: %w", sub, err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT event, meeting FROM feed_seen WHERE subscription = ?`, sub)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("storage: feed of %s: %w", sub, err)
	}
	defer rows.Close()
	seen := map[string]meetingbot.Meeting{}
	for rows.Next() {
		var id, body string
		if err := rows.Scan(&id, &body); err != nil {
			return nil, time.Time{}, fmt.Errorf("storage: feed of %s: %w", sub, err)
		}
		var m meetingbot.Meeting
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			return nil, time.Time{}, fmt.Errorf("storage: feed of %s: event %s: %w", sub, id, err)
		}
		seen[id] = m
	}
	if err := rows.Err(); err != nil {
		return nil, time.Time{}, fmt.Errorf("storage: feed of %s: %w", sub, err)
	}
	return seen, fromMS(primed), nil
}

// PutFeedSeen records what the channel of sub now knows: each of put
// replaces the event of its ID, the events of drop leave. primed is when
// its first reading was taken, kept only if none is yet; a zero primed
// with none kept is ErrInvalid.
func (s *Store) PutFeedSeen(ctx context.Context, sub string, primed time.Time, put []meetingbot.Meeting, drop []string) error {
	s.write.Lock()
	defer s.write.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storage: feed of %s: %w", sub, err)
	}
	defer tx.Rollback()
	if !primed.IsZero() {
		if _, err := tx.ExecContext(ctx, `INSERT INTO feed_primed (subscription, primed_ms) VALUES (?, ?) ON CONFLICT DO NOTHING`, sub, ms(primed)); err != nil {
			return fmt.Errorf("storage: feed of %s: %w", sub, err)
		}
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM feed_primed WHERE subscription = ?`, sub).Scan(&n); err != nil {
		return fmt.Errorf("storage: feed of %s: %w", sub, err)
	}
	if n == 0 {
		return fmt.Errorf("storage: feed of %s: %w: no first reading", sub, ErrInvalid)
	}
	for _, id := range drop {
		if _, err := tx.ExecContext(ctx, `DELETE FROM feed_seen WHERE subscription = ? AND event = ?`, sub, id); err != nil {
			return fmt.Errorf("storage: feed of %s: %w", sub, err)
		}
	}
	for _, m := range put {
		body, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("storage: feed of %s: %w", sub, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO feed_seen (subscription, event, meeting) VALUES (?, ?, ?)
			ON CONFLICT (subscription, event) DO UPDATE SET meeting = excluded.meeting`, sub, m.ID, string(body)); err != nil {
			return fmt.Errorf("storage: feed of %s: %w", sub, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("storage: feed of %s: %w", sub, err)
	}
	return nil
}

// ForgetFeed drops what the channel of sub was told, its first reading
// included: a channel that stops following changes and starts again
// begins from a new first reading.
func (s *Store) ForgetFeed(ctx context.Context, sub string) error {
	s.write.Lock()
	defer s.write.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storage: forget feed of %s: %w", sub, err)
	}
	defer tx.Rollback()
	for _, q := range []string{`DELETE FROM feed_seen WHERE subscription = ?`, `DELETE FROM feed_primed WHERE subscription = ?`, `DELETE FROM feed_pending WHERE subscription = ?`} {
		if _, err := tx.ExecContext(ctx, q, sub); err != nil {
			return fmt.Errorf("storage: forget feed of %s: %w", sub, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("storage: forget feed of %s: %w", sub, err)
	}
	return nil
}

// FeedPending returns the notices of sub being posted, by event ID.
func (s *Store) FeedPending(ctx context.Context, sub string) (map[string]meetingbot.FeedPending, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT event, key, meeting FROM feed_pending WHERE subscription = ?`, sub)
	if err != nil {
		return nil, fmt.Errorf("storage: feed pending of %s: %w", sub, err)
	}
	defer rows.Close()
	out := map[string]meetingbot.FeedPending{}
	for rows.Next() {
		var p meetingbot.FeedPending
		var body string
		if err := rows.Scan(&p.Event, &p.Key, &body); err != nil {
			return nil, fmt.Errorf("storage: feed pending of %s: %w", sub, err)
		}
		if err := json.Unmarshal([]byte(body), &p.Now); err != nil {
			return nil, fmt.Errorf("storage: feed pending of %s: event %s: %w", sub, p.Event, err)
		}
		out[p.Event] = p
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: feed pending of %s: %w", sub, err)
	}
	return out, nil
}

// PutFeedPending records notices of sub about to be posted, each
// replacing the one of its event; DropFeedPending forgets those of
// events, their outcome known.
func (s *Store) PutFeedPending(ctx context.Context, sub string, ps []meetingbot.FeedPending) error {
	s.write.Lock()
	defer s.write.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storage: feed pending of %s: %w", sub, err)
	}
	defer tx.Rollback()
	for _, p := range ps {
		body, err := json.Marshal(p.Now)
		if err != nil {
			return fmt.Errorf("storage: feed pending of %s: %w", sub, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO feed_pending (subscription, event, key, meeting) VALUES (?, ?, ?, ?)
			ON CONFLICT (subscription, event) DO UPDATE SET key = excluded.key, meeting = excluded.meeting`, sub, p.Event, p.Key, string(body)); err != nil {
			return fmt.Errorf("storage: feed pending of %s: %w", sub, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("storage: feed pending of %s: %w", sub, err)
	}
	return nil
}

// DropFeedPending forgets the notices of sub being posted about events.
func (s *Store) DropFeedPending(ctx context.Context, sub string, events []string) error {
	s.write.Lock()
	defer s.write.Unlock()
	for _, id := range events {
		if _, err := s.db.ExecContext(ctx, `DELETE FROM feed_pending WHERE subscription = ? AND event = ?`, sub, id); err != nil {
			return fmt.Errorf("storage: feed pending of %s: %w", sub, err)
		}
	}
	return nil
}
