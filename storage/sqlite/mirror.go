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

// The mirror of each calendar's upcoming instances, kept by incremental
// sync (migration 006), and the push channels open on calendars. A sync's
// changes and its new token are written in one transaction, so a crash
// never keeps a token with only part of the changes it stands for.

// CalendarSync returns what is kept of calendarID's sync, and whether
// anything is.
func (s *Store) CalendarSync(ctx context.Context, calendarID string) (meetingbot.CalendarSync, bool, error) {
	st := meetingbot.CalendarSync{CalendarID: calendarID}
	var from, horizon, full, synced int64
	err := s.stmt.calendarSync.QueryRowContext(ctx, calendarID).
		Scan(&st.Token, &from, &horizon, &full, &synced)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return meetingbot.CalendarSync{}, false, nil
	case err != nil:
		return meetingbot.CalendarSync{}, false, fmt.Errorf("storage: sync of %s: %w", calendarID, err)
	}
	st.From, st.Horizon, st.FullAt, st.SyncedAt = fromMS(from), fromMS(horizon), fromMS(full), fromMS(synced)
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
	s.write.Lock()
	defer s.write.Unlock()
	if !full && len(changed) == 0 && len(removed) == 0 {
		// Nothing changed, which is most syncs: one statement is atomic
		// without a transaction, whose begin and commit would cost more
		// than the statement itself.
		if _, err := s.stmt.syncUpsert.ExecContext(ctx, syncArgs(st)...); err != nil {
			return fmt.Errorf("storage: mirror %s: %w", st.CalendarID, err)
		}
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storage: mirror %s: %w", st.CalendarID, err)
	}
	defer tx.Rollback()
	if full {
		if _, err := tx.ExecContext(ctx, `DELETE FROM calendar_instances WHERE calendar = ?`, st.CalendarID); err != nil {
			return fmt.Errorf("storage: mirror %s: %w", st.CalendarID, err)
		}
	}
	del, upsert := tx.StmtContext(ctx, s.stmt.mirrorDelete), tx.StmtContext(ctx, s.stmt.mirrorUpsert)
	for _, id := range removed {
		if _, err := del.ExecContext(ctx, st.CalendarID, id); err != nil {
			return fmt.Errorf("storage: mirror %s: %w", st.CalendarID, err)
		}
	}
	for _, m := range changed {
		body, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("storage: mirror %s: %w", st.CalendarID, err)
		}
		if _, err := upsert.ExecContext(ctx, st.CalendarID, m.ID, ms(m.Start), string(body)); err != nil {
			return fmt.Errorf("storage: mirror %s: %w", st.CalendarID, err)
		}
	}
	if _, err := tx.StmtContext(ctx, s.stmt.syncUpsert).ExecContext(ctx, syncArgs(st)...); err != nil {
		return fmt.Errorf("storage: mirror %s: %w", st.CalendarID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("storage: mirror %s: %w", st.CalendarID, err)
	}
	return nil
}

// syncArgs are the arguments of the statement syncUpsert.
func syncArgs(st meetingbot.CalendarSync) []any {
	return []any{st.CalendarID, st.Token, ms(st.From), ms(st.Horizon), ms(st.FullAt), ms(st.SyncedAt)}
}

// Mirrored returns the mirrored instances of calendarID that start in
// (from, to], by start, then ID.
func (s *Store) Mirrored(ctx context.Context, calendarID string, from, to time.Time) ([]meetingbot.Meeting, error) {
	rows, err := s.stmt.mirrored.QueryContext(ctx, calendarID, from.UnixMilli(), to.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("storage: mirror of %s: %w", calendarID, err)
	}
	defer rows.Close()
	var out []meetingbot.Meeting
	for rows.Next() {
		var body string
		var m meetingbot.Meeting
		if err := rows.Scan(&body); err != nil {
			return nil, fmt.Errorf("storage: mirror of %s: %w", calendarID, err)
		}
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			return nil, fmt.Errorf("storage: mirror of %s: %w", calendarID, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: mirror of %s: %w", calendarID, err)
	}
	return out, nil
}

// ForgetMirror drops what is kept of calendarID's sync and its mirror:
// the token Google refused (410), or a calendar no longer subscribed. Its
// push channels stay until DeleteChannel.
func (s *Store) ForgetMirror(ctx context.Context, calendarID string) error {
	s.write.Lock()
	defer s.write.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storage: forget mirror of %s: %w", calendarID, err)
	}
	defer tx.Rollback()
	for _, q := range []string{`DELETE FROM calendar_instances WHERE calendar = ?`, `DELETE FROM calendar_sync WHERE calendar = ?`} {
		if _, err := tx.ExecContext(ctx, q, calendarID); err != nil {
			return fmt.Errorf("storage: forget mirror of %s: %w", calendarID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("storage: forget mirror of %s: %w", calendarID, err)
	}
	return nil
}

// MirroredCalendars lists the calendars with a sync kept, sorted.
func (s *Store) MirroredCalendars(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT calendar FROM calendar_sync ORDER BY calendar`)
	if err != nil {
		return nil, fmt.Errorf("storage: mirrored calendars: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, fmt.Errorf("storage: mirrored calendars: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: mirrored calendars: %w", err)
	}
	return out, nil
}

// PutChannel keeps ch, replacing a channel of the same ID.
func (s *Store) PutChannel(ctx context.Context, ch meetingbot.PushChannel) error {
	s.write.Lock()
	defer s.write.Unlock()
	_, err := s.db.ExecContext(ctx, `INSERT INTO push_channels (id, calendar, opener, token, resource, expiration_ms) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET calendar = excluded.calendar, opener = excluded.opener, token = excluded.token,
			resource = excluded.resource, expiration_ms = excluded.expiration_ms`,
		ch.ID, ch.CalendarID, ch.Opener, ch.Token, ch.ResourceID, ms(ch.Expiration))
	if err != nil {
		return fmt.Errorf("storage: keep channel %s: %w", ch.ID, err)
	}
	return nil
}

// Channels returns every push channel kept, by calendar, then expiration.
func (s *Store) Channels(ctx context.Context) ([]meetingbot.PushChannel, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, calendar, opener, token, resource, expiration_ms FROM push_channels ORDER BY calendar, expiration_ms, id`)
	if err != nil {
		return nil, fmt.Errorf("storage: channels: %w", err)
	}
	defer rows.Close()
	var out []meetingbot.PushChannel
	for rows.Next() {
		var ch meetingbot.PushChannel
		var exp int64
		if err := rows.Scan(&ch.ID, &ch.CalendarID, &ch.Opener, &ch.Token, &ch.ResourceID, &exp); err != nil {
			return nil, fmt.Errorf("storage: channels: %w", err)
		}
		ch.Expiration = fromMS(exp)
		out = append(out, ch)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: channels: %w", err)
	}
	return out, nil
}

// DeleteChannel forgets the channel id; one not kept is no error.
func (s *Store) DeleteChannel(ctx context.Context, id string) error {
	s.write.Lock()
	defer s.write.Unlock()
	if _, err := s.db.ExecContext(ctx, `DELETE FROM push_channels WHERE id = ?`, id); err != nil {
		return fmt.Errorf("storage: forget channel %s: %w", id, err)
	}
	return nil
}
