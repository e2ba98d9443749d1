package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Durable timers (meetingbot.Timer): the waits people create, whose row
// is the truth. A timer is taken by one process at a time under a lease,
// judged as a ledger claim is: a holder's lease is another process's while
// that process lives (its flock), or, where liveness cannot be told, until
// the lease runs out.

const timerColumns = `key, grp, kind, subject, fire_ms, due_ms, until_ms, payload, state, code, reason,
	next_key, holder, lease_until_ms, attempts, created_ms, done_ms`

func scanTimer(row interface{ Scan(...any) error }) (meetingbot.Timer, error) {
	var t meetingbot.Timer
	var fire, due, until, lease, created, done int64
	var payload string
	err := row.Scan(&t.Key, &t.Group, &t.Kind, &t.Subject, &fire, &due, &until, &payload, &t.State, &t.Code, &t.Reason,
		&t.Next, &t.Holder, &lease, &t.Attempts, &created, &done)
	t.FireAt, t.DueAt, t.Until = fromMS(fire), fromMS(due), fromMS(until)
	t.LeaseUntil, t.CreatedAt, t.DoneAt = fromMS(lease), fromMS(created), fromMS(done)
	t.Payload = []byte(payload)
	return t, err
}

// timers runs q and returns the timers it selects.
func (s *Store) timers(ctx context.Context, q querier, query string, args ...any) ([]meetingbot.Timer, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []meetingbot.Timer
	for rows.Next() {
		t, err := scanTimer(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// execer is a *sql.DB or a *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// AddTimer stores t, pending, created at now, unless a timer with its key
// exists or one of its group is pending: then it returns that one and
// false. A timer with its key that was cancelled is made pending again as
// t says. It is one transaction: two processes adding the same timer at
// once make one.
func (s *Store) AddTimer(ctx context.Context, t meetingbot.Timer, now time.Time) (meetingbot.Timer, bool, error) {
	if t.Key == "" || t.Kind == "" || t.FireAt.IsZero() {
		return meetingbot.Timer{}, false, fmt.Errorf("storage: add timer %q: %w", t.Key, meetingbot.ErrInvalid)
	}
	s.write.Lock()
	defer s.write.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return meetingbot.Timer{}, false, fmt.Errorf("storage: add timer %s: %w", t.Key, err)
	}
	defer tx.Rollback()
	if t.Group != "" {
		got, err := scanTimer(tx.QueryRowContext(ctx, `SELECT `+timerColumns+` FROM timers WHERE grp = ? AND state = 'pending'`, t.Group))
		if err == nil {
			return got, false, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return meetingbot.Timer{}, false, fmt.Errorf("storage: add timer %s: %w", t.Key, err)
		}
	}
	got, err := scanTimer(tx.QueryRowContext(ctx, `SELECT `+timerColumns+` FROM timers WHERE key = ?`, t.Key))
	switch {
	case err == nil && got.State != meetingbot.TimerCancelled:
		return got, false, nil
	case err == nil:
		_, err = tx.ExecContext(ctx, `UPDATE timers SET grp = ?, kind = ?, subject = ?, fire_ms = ?, due_ms = ?, until_ms = ?, payload = ?,
			state = 'pending', code = '', reason = '', next_key = '', holder = '', lease_until_ms = 0, created_ms = ?, done_ms = 0 WHERE key = ?`,
			t.Group, t.Kind, t.Subject, ms(t.FireAt), ms(dueOf(t)), ms(t.Until), string(payloadOf(t)), ms(now), t.Key)
	case errors.Is(err, sql.ErrNoRows):
		err = insertTimer(ctx, tx, t, now)
	}
	if err != nil {
		return meetingbot.Timer{}, false, fmt.Errorf("storage: add timer %s: %w", t.Key, err)
	}
	if err := tx.Commit(); err != nil {
		return meetingbot.Timer{}, false, fmt.Errorf("storage: add timer %s: %w", t.Key, err)
	}
	return pendingAt(t, now), true, nil
}

func insertTimer(ctx context.Context, q execer, t meetingbot.Timer, now time.Time) error {
	_, err := q.ExecContext(ctx, `INSERT INTO timers (key, grp, kind, subject, fire_ms, due_ms, until_ms, payload, created_ms)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		t.Key, t.Group, t.Kind, t.Subject, ms(t.FireAt), ms(dueOf(t)), ms(t.Until), string(payloadOf(t)), ms(now))
	return err
}

// pendingAt is t as AddTimer stores it.
func pendingAt(t meetingbot.Timer, now time.Time) meetingbot.Timer {
	t.State, t.Code, t.Reason, t.Next, t.Holder = meetingbot.TimerPending, "", "", "", ""
	t.DueAt, t.LeaseUntil, t.Attempts, t.DoneAt = dueOf(t), time.Time{}, 0, time.Time{}
	t.CreatedAt = now.UTC().Truncate(time.Millisecond)
	t.FireAt, t.Until = t.FireAt.UTC().Truncate(time.Millisecond), t.Until.UTC().Truncate(time.Millisecond)
	t.Payload = payloadOf(t)
	return t
}

// dueOf is when a new timer is first tried: DueAt if set, else FireAt.
func dueOf(t meetingbot.Timer) time.Time {
	if t.DueAt.IsZero() {
		return t.FireAt.UTC().Truncate(time.Millisecond)
	}
	return t.DueAt.UTC().Truncate(time.Millisecond)
}

func payloadOf(t meetingbot.Timer) []byte {
	if len(t.Payload) == 0 {
		return []byte("{}")
	}
	return t.Payload
}

// NextTimers returns the pending timers due by now that this process may
// take (none held by another live process), earliest first, when the
// next of the others falls due (the due instant of one not yet due, or
// the end of the lease of one another process holds; zero when there is
// none), and how many timers are pending in all, from one read.
func (s *Store) NextTimers(ctx context.Context, now time.Time) (due []meetingbot.Timer, next time.Time, pending int, err error) {
	all, err := s.timers(ctx, s.db, `SELECT `+timerColumns+` FROM timers WHERE state = 'pending' ORDER BY due_ms, key`)
	if err != nil {
		return nil, time.Time{}, 0, fmt.Errorf("storage: next timers: %w", err)
	}
	soonest := func(at time.Time) {
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	for _, t := range all {
		switch {
		case s.otherLive(t.Holder, t.LeaseUntil, now):
			if t.LeaseUntil.After(now) {
				soonest(t.LeaseUntil)
			}
		case t.DueAt.After(now):
			soonest(t.DueAt)
		default:
			due = append(due, t)
		}
	}
	return due, next, len(all), nil
}

// TakeTimer takes the pending timer key for this process for lease from
// now, if it is due and no other live process holds it, and returns it
// and true; else it returns what it found and false.
func (s *Store) TakeTimer(ctx context.Context, key string, now time.Time, lease time.Duration) (meetingbot.Timer, bool, error) {
	s.write.Lock()
	defer s.write.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return meetingbot.Timer{}, false, fmt.Errorf("storage: take timer %s: %w", key, err)
	}
	defer tx.Rollback()
	t, err := scanTimer(tx.QueryRowContext(ctx, `SELECT `+timerColumns+` FROM timers WHERE key = ?`, key))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return meetingbot.Timer{}, false, nil
	case err != nil:
		return meetingbot.Timer{}, false, fmt.Errorf("storage: take timer %s: %w", key, err)
	case t.State != meetingbot.TimerPending || t.DueAt.After(now) || s.otherLive(t.Holder, t.LeaseUntil, now):
		return t, false, nil
	}
	t.Holder, t.LeaseUntil, t.Attempts = s.owner, now.Add(lease).UTC().Truncate(time.Millisecond), t.Attempts+1
	if _, err := tx.ExecContext(ctx, `UPDATE timers SET holder = ?, lease_until_ms = ?, attempts = ? WHERE key = ?`,
		t.Holder, ms(t.LeaseUntil), t.Attempts, key); err != nil {
		return meetingbot.Timer{}, false, fmt.Errorf("storage: take timer %s: %w", key, err)
	}
	if err := tx.Commit(); err != nil {
		return meetingbot.Timer{}, false, fmt.Errorf("storage: take timer %s: %w", key, err)
	}
	return t, true, nil
}

// FinishTimer ends a timer this process holds with t's State, Code and
// Reason, at now. A timer cancelled while it was being fired is ended
// too: the state then says what was done. It returns
// meetingbot.ErrTimerLost if this process no longer holds it.
func (s *Store) FinishTimer(ctx context.Context, t meetingbot.Timer, now time.Time) error {
	s.write.Lock()
	defer s.write.Unlock()
	res, err := s.db.ExecContext(ctx, `UPDATE timers SET state = ?, code = ?, reason = ?, done_ms = ?, holder = '', lease_until_ms = 0
		WHERE key = ? AND holder = ? AND state IN ('pending', 'cancelled')`, t.State, t.Code, t.Reason, ms(now), t.Key, s.owner)
	if err != nil {
		return fmt.Errorf("storage: finish timer %s: %w", t.Key, err)
	}
	return timerHeld(res, "finish", t.Key)
}

// MoveTimer ends the timer old, which this process holds, as moved to
// next (its meeting moved), and stores next pending, in one transaction;
// a timer of next's key that ended (the meeting moved back to a start it
// had) waits again as next says. The ledger's claims keep a DM already
// sent under that key from going out twice.
// It returns meetingbot.ErrTimerLost if this process no longer holds old.
func (s *Store) MoveTimer(ctx context.Context, old, next meetingbot.Timer, now time.Time) error {
	s.write.Lock()
	defer s.write.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storage: move timer %s: %w", old.Key, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE timers SET state = 'moved', code = ?, reason = ?, next_key = ?, done_ms = ?, holder = '', lease_until_ms = 0
		WHERE key = ? AND holder = ? AND state = 'pending'`, meetingbot.ReasonMeetingMoved, old.Reason, next.Key, ms(now), old.Key, s.owner)
	if err != nil {
		return fmt.Errorf("storage: move timer %s: %w", old.Key, err)
	}
	if err := timerHeld(res, "move", old.Key); err != nil {
		return err
	}
	// The meeting may move back to a start it had: the timer of that key,
	// ended as moved, waits again.
	if err := upsertMoved(ctx, tx, next, now); err != nil {
		return fmt.Errorf("storage: move timer %s to %s: %w", old.Key, next.Key, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("storage: move timer %s: %w", old.Key, err)
	}
	return nil
}

// RekeyTimer ends the pending timer key as moved to next, with reason,
// and stores next pending (a timer of next's key that ended waits again
// as next says), in one transaction, when key's instant and its next try
// are both after now and nobody holds it: a wait whose meeting moved
// before the wait came. It reports whether it did; a timer due, being
// fired or ended is left to its fire, which checks its meeting anyway.
func (s *Store) RekeyTimer(ctx context.Context, key string, next meetingbot.Timer, reason string, now time.Time) (bool, error) {
	if next.Key == "" || next.Key == key || next.Kind == "" || next.FireAt.IsZero() {
		return false, fmt.Errorf("storage: rekey timer %s to %q: %w", key, next.Key, meetingbot.ErrInvalid)
	}
	s.write.Lock()
	defer s.write.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("storage: rekey timer %s: %w", key, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE timers SET state = 'moved', code = ?, reason = ?, next_key = ?, done_ms = ?
		WHERE key = ? AND state = 'pending' AND holder = '' AND fire_ms > ? AND due_ms > ?`,
		meetingbot.ReasonMeetingMoved, reason, next.Key, ms(now), key, ms(now), ms(now))
	if err != nil {
		return false, fmt.Errorf("storage: rekey timer %s: %w", key, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	if err := upsertMoved(ctx, tx, next, now); err != nil {
		return false, fmt.Errorf("storage: rekey timer %s to %s: %w", key, next.Key, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("storage: rekey timer %s: %w", key, err)
	}
	return true, nil
}

// upsertMoved stores next pending, the timer a moved one goes on as: a
// timer of its key that ended (the meeting moved back to a start it had)
// waits again as next says.
func upsertMoved(ctx context.Context, q execer, next meetingbot.Timer, now time.Time) error {
	_, err := q.ExecContext(ctx, `INSERT INTO timers (key, grp, kind, subject, fire_ms, due_ms, until_ms, payload, created_ms)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET grp = excluded.grp, kind = excluded.kind, subject = excluded.subject, fire_ms = excluded.fire_ms,
			due_ms = excluded.due_ms, until_ms = excluded.until_ms, payload = excluded.payload, created_ms = excluded.created_ms,
			state = 'pending', code = '', reason = '', next_key = '', holder = '', lease_until_ms = 0, done_ms = 0
		WHERE timers.state <> 'pending'`,
		next.Key, next.Group, next.Kind, next.Subject, ms(next.FireAt), ms(dueOf(next)), ms(next.Until), string(payloadOf(next)), ms(now))
	return err
}

// RetryTimer gives back a timer this process holds, to be tried again at
// at (a failure a retry may mend), saying why in reason. It returns
// meetingbot.ErrTimerLost if this process no longer holds it.
func (s *Store) RetryTimer(ctx context.Context, t meetingbot.Timer, at time.Time, reason string) error {
	s.write.Lock()
	defer s.write.Unlock()
	res, err := s.db.ExecContext(ctx, `UPDATE timers SET due_ms = ?, reason = ?, holder = '', lease_until_ms = 0
		WHERE key = ? AND holder = ? AND state = 'pending'`, ms(at), reason, t.Key, s.owner)
	if err != nil {
		return fmt.Errorf("storage: retry timer %s: %w", t.Key, err)
	}
	return timerHeld(res, "retry", t.Key)
}

func timerHeld(res sql.Result, op, key string) error {
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("storage: %s timer %s: %w", op, key, meetingbot.ErrTimerLost)
	}
	return nil
}

// CancelTimer cancels the pending timer key of subject at now, and
// returns it and true; false when there is no such pending timer.
func (s *Store) CancelTimer(ctx context.Context, key, subject string, now time.Time) (meetingbot.Timer, bool, error) {
	s.write.Lock()
	defer s.write.Unlock()
	got, err := s.timers(ctx, s.db, `UPDATE timers SET state = 'cancelled', code = ?, reason = 'cancelled by its person', done_ms = ?
		WHERE key = ? AND subject = ? AND state = 'pending' RETURNING `+timerColumns, meetingbot.ReasonCancelledByUser, ms(now), key, subject)
	if err != nil {
		return meetingbot.Timer{}, false, fmt.Errorf("storage: cancel timer %s: %w", key, err)
	}
	if len(got) == 0 {
		return meetingbot.Timer{}, false, nil
	}
	return got[0], true, nil
}

// Timer returns the timer key, and whether there is one.
func (s *Store) Timer(ctx context.Context, key string) (meetingbot.Timer, bool, error) {
	t, err := scanTimer(s.db.QueryRowContext(ctx, `SELECT `+timerColumns+` FROM timers WHERE key = ?`, key))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return meetingbot.Timer{}, false, nil
	case err != nil:
		return meetingbot.Timer{}, false, fmt.Errorf("storage: timer %s: %w", key, err)
	}
	return t, true, nil
}

// PendingTimers returns the pending timers of subject (of everyone when
// it is empty), by fire instant.
func (s *Store) PendingTimers(ctx context.Context, subject string) ([]meetingbot.Timer, error) {
	q, args := `SELECT `+timerColumns+` FROM timers WHERE state = 'pending'`, []any{}
	if subject != "" {
		q, args = q+` AND subject = ?`, append(args, subject)
	}
	out, err := s.timers(ctx, s.db, q+` ORDER BY fire_ms, key`, args...)
	if err != nil {
		return nil, fmt.Errorf("storage: pending timers: %w", err)
	}
	return out, nil
}

// TimerRange returns the timers, in any state, whose fire instant is in
// [from, to), by fire instant.
func (s *Store) TimerRange(ctx context.Context, from, to time.Time) ([]meetingbot.Timer, error) {
	out, err := s.timers(ctx, s.db, `SELECT `+timerColumns+` FROM timers WHERE fire_ms >= ? AND fire_ms < ? ORDER BY fire_ms, key`, ms(from), ms(to))
	if err != nil {
		return nil, fmt.Errorf("storage: timer range: %w", err)
	}
	return out, nil
}

// PruneTimers deletes the ended timers whose instant is before before, and
// returns how many.
func (s *Store) PruneTimers(ctx context.Context, before time.Time) (int64, error) {
	s.write.Lock()
	defer s.write.Unlock()
	res, err := s.db.ExecContext(ctx, `DELETE FROM timers WHERE fire_ms < ? AND state <> 'pending'`, ms(before))
	if err != nil {
		return 0, fmt.Errorf("storage: prune timers: %w", err)
	}
	return res.RowsAffected()
}
