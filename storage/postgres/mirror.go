package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/meetingbot/meetingbot"
)

// The mirror of each calendar's upcoming instances, kept by incremental
// sync (migration 006), and the push channels open on calendars, as
// SQLite's. A sync's changes and its new token are written in one
// transaction.

// CalendarSync returns what is kept of calendarID's sync, and whether
// anything is.
func (s *Store) CalendarSync(ctx context.Context, calendarID string) (meetingbot.CalendarSync, bool, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	st := meetingbot.CalendarSync{CalendarID: calendarID}
	var from, horizon, full, synced pgtype.Timestamptz
	err := s.pool.QueryRow(ctx, `SELECT token, from_at, horizon, full_at, synced_at FROM calendar_sync WHERE calendar = $1`, calendarID).
		Scan(&st.Token, &from, &horizon, &full, &synced)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return meetingbot.CalendarSync{}, false, nil
	case err != nil:
		return meetingbot.CalendarSync{}, false, fmt.Errorf("postgres: sync of %s: %w", calendarID, s.lost(err))
	}
	st.From, st.Horizon, st.FullAt, st.SyncedAt = instant(from), instant(horizon), instant(full), instant(synced)
	return st, true, nil
}

// ReplaceMirror keeps st and makes meetings the whole mirror of
// st.CalendarID: the outcome of a full sync.
func (s *Store) ReplaceMirror(ctx context.Context, st meetingbot.CalendarSync, meetings []meetingbot.Meeting) error {
	return s.writeMirror(ctx, st, true, meetings, nil)
}

// UpdateMirror keeps st and applies an incremental sync to the mirror of
// st.CalendarID: each of changed replaces the instance of its ID, and the
// instances of the IDs in removed leave.
func (s *Store) UpdateMirror(ctx context.Context, st meetingbot.CalendarSync, changed []meetingbot.Meeting, removed []string) error {
	return s.writeMirror(ctx, st, false, changed, removed)
}

func (s *Store) writeMirror(ctx context.Context, st meetingbot.CalendarSync, full bool, changed []meetingbot.Meeting, removed []string) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if full {
			if _, err := tx.Exec(ctx, `DELETE FROM calendar_instances WHERE calendar = $1`, st.CalendarID); err != nil {
				return err
			}
		}
		if len(removed) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM calendar_instances WHERE calendar = $1 AND id = ANY($2)`, st.CalendarID, removed); err != nil {
				return err
			}
		}
		for _, m := range changed {
			body, err := json.Marshal(m)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO calendar_instances (calendar, id, start_at, meeting) VALUES ($1, $2, $3, $4)
				ON CONFLICT (calendar, id) DO UPDATE SET start_at = excluded.start_at, meeting = excluded.meeting`,
				st.CalendarID, m.ID, ts(m.Start), string(body)); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO calendar_sync (calendar, token, from_at, horizon, full_at, synced_at) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (calendar) DO UPDATE SET token = excluded.token, from_at = excluded.from_at, horizon = excluded.horizon,
				full_at = excluded.full_at, synced_at = excluded.synced_at`,
			st.CalendarID, st.Token, ts(st.From), ts(st.Horizon), ts(st.FullAt), ts(st.SyncedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: mirror %s: %w", st.CalendarID, s.lost(err))
	}
	return nil
}

// Mirrored returns the mirrored instances of calendarID that start in
// (from, to], by start, then ID.
func (s *Store) Mirrored(ctx context.Context, calendarID string, from, to time.Time) ([]meetingbot.Meeting, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	// As SQLite, to the millisecond.
	rows, err := s.pool.Query(ctx, `SELECT meeting::text FROM calendar_instances
		WHERE calendar = $1 AND start_at > $2 AND start_at <= $3 ORDER BY start_at, id`,
		calendarID, from.UTC().Truncate(time.Millisecond), to.UTC().Truncate(time.Millisecond))
	if err != nil {
		return nil, fmt.Errorf("postgres: mirror of %s: %w", calendarID, s.lost(err))
	}
	var out []meetingbot.Meeting
	var body string
	_, err = pgx.ForEachRow(rows, []any{&body}, func() error {
		var m meetingbot.Meeting
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			return err
		}
		out = append(out, m)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: mirror of %s: %w", calendarID, s.lost(err))
	}
	return out, nil
}

// ForgetMirror drops what is kept of calendarID's sync and its mirror:
// the token Google refused (410), or a calendar no longer subscribed. Its
// push channels stay until DeleteChannel.
func (s *Store) ForgetMirror(ctx context.Context, calendarID string) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM calendar_instances WHERE calendar = $1`, calendarID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM calendar_sync WHERE calendar = $1`, calendarID)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: forget mirror of %s: %w", calendarID, s.lost(err))
	}
	return nil
}

// MirroredCalendars lists the calendars with a sync kept, sorted.
func (s *Store) MirroredCalendars(ctx context.Context) ([]string, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT calendar FROM calendar_sync ORDER BY calendar`)
	if err != nil {
		return nil, fmt.Errorf("postgres: mirrored calendars: %w", s.lost(err))
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: mirrored calendars: %w", s.lost(err))
	}
	return out, nil
}

// PutChannel keeps ch, replacing a channel of the same ID.
func (s *Store) PutChannel(ctx context.Context, ch meetingbot.PushChannel) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	_, err := s.exec(ctx, `INSERT INTO push_channels (id, calendar, opener, token, resource, expiration) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO UPDATE SET calendar = excluded.calendar, opener = excluded.opener, token = excluded.token,
			resource = excluded.resource, expiration = excluded.expiration`,
		ch.ID, ch.CalendarID, ch.Opener, ch.Token, ch.ResourceID, ts(ch.Expiration))
	if err != nil {
		return fmt.Errorf("postgres: keep channel %s: %w", ch.ID, err)
	}
	return nil
}

// Channels returns every push channel kept, by calendar, then expiration.
func (s *Store) Channels(ctx context.Context) ([]meetingbot.PushChannel, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT id, calendar, opener, token, resource, expiration FROM push_channels
		ORDER BY calendar, expiration NULLS FIRST, id`)
	if err != nil {
		return nil, fmt.Errorf("postgres: channels: %w", s.lost(err))
	}
	var out []meetingbot.PushChannel
	var ch meetingbot.PushChannel
	var exp pgtype.Timestamptz
	_, err = pgx.ForEachRow(rows, []any{&ch.ID, &ch.CalendarID, &ch.Opener, &ch.Token, &ch.ResourceID, &exp}, func() error {
		got := ch
		got.Expiration = instant(exp)
		out = append(out, got)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: channels: %w", s.lost(err))
	}
	return out, nil
}

// DeleteChannel forgets the channel id; one not kept is no error.
func (s *Store) DeleteChannel(ctx context.Context, id string) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	if _, err := s.exec(ctx, `DELETE FROM push_channels WHERE id = $1`, id); err != nil {
		return fmt.Errorf("postgres: forget channel %s: %w", id, err)
	}
	return nil
}
