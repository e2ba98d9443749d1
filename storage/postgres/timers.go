package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/meetingbot/meetingbot"
)

// Durable timers (meetingbot.Timer): the waits people create, whose row
// is the truth. A timer is taken by one replica at a time under a lease
// written and judged with the database's clock (dbNow), never a replica's:
// replicas whose clocks disagree agree on whose a timer is. A lease is
// another replica's while that replica's heartbeat is fresh or the lease
// runs, whichever is longer, as a ledger claim is; a replica that closed
// holds nothing.

const timerColumns = `t.key, t.grp, t.kind, t.subject, t.fire_at, t.due_at, t.until_at, t.payload, t.state, t.code, t.reason,
	t.next_key, t.holder, t.lease_until, t.attempts, t.created_at, t.done_at`

// heldElsewhere is the SQL that a timer t is held by another live replica
// than $2 at dbNow.
const heldElsewhere = `(t.holder <> '' AND t.holder <> $2 AND EXISTS (SELECT 1 FROM replicas r WHERE r.owner = t.holder
	AND (r.alive_until > ` + dbNow + ` OR t.lease_until > ` + dbNow + `)))`

func scanTimer(r pgx.Row, extra ...any) (meetingbot.Timer, error) {
	var t meetingbot.Timer
	var fire, due, created time.Time
	var until, lease, done pgtype.Timestamptz
	var state, code, payload string
	if err := r.Scan(append([]any{&t.Key, &t.Group, &t.Kind, &t.Subject, &fire, &due, &until, &payload, &state, &code, &t.Reason,
		&t.Next, &t.Holder, &lease, &t.Attempts, &created, &done}, extra...)...); err != nil {
		return meetingbot.Timer{}, err
	}
	t.State, t.Code, t.Payload = meetingbot.TimerState(state), meetingbot.ReasonCode(code), []byte(payload)
	t.FireAt, t.DueAt, t.CreatedAt = fire.UTC(), due.UTC(), created.UTC()
	t.Until, t.LeaseUntil, t.DoneAt = instant(until), instant(lease), instant(done)
	return t, nil
}

func collectTimers(rows pgx.Rows, err error) ([]meetingbot.Timer, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (meetingbot.Timer, error) { return scanTimer(r) })
}

func timerPayload(t meetingbot.Timer) string {
	if len(t.Payload) == 0 {
		return "{}"
	}
	return string(t.Payload)
}

func timerDue(t meetingbot.Timer) time.Time {
	if t.DueAt.IsZero() {
		return t.FireAt
	}
	return t.DueAt
}

// AddTimer stores t, pending, created at now, unless a timer with its key
// exists or one of its group is pending: then it returns that one and
// false. A timer with its key that was cancelled is made pending again as
// t says. Replicas adding the same timer at once make one: the check and
// the write share a transaction under an advisory lock on the key.
func (s *Store) AddTimer(ctx context.Context, t meetingbot.Timer, now time.Time) (meetingbot.Timer, bool, error) {
	if t.Key == "" || t.Kind == "" || t.FireAt.IsZero() {
		return meetingbot.Timer{}, false, fmt.Errorf("postgres: add timer %q: %w", t.Key, meetingbot.ErrInvalid)
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	var got meetingbot.Timer
	added := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// One lock per group (or key): every add of one wait queues on it.
		lock := t.Group
		if lock == "" {
			lock = t.Key
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.timer.' || $1))`, lock); err != nil {
			return err
		}
		if t.Group != "" {
			var err error
			got, err = scanTimer(tx.QueryRow(ctx, `SELECT `+timerColumns+` FROM timers t WHERE t.grp = $1 AND t.state = 'pending'`, t.Group))
			if err == nil || !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
		}
		var err error
		got, err = scanTimer(tx.QueryRow(ctx, `SELECT `+timerColumns+` FROM timers t WHERE t.key = $1`, t.Key))
		switch {
		case err == nil && got.State != meetingbot.TimerCancelled:
			return nil
		case err == nil:
			_, err = tx.Exec(ctx, `UPDATE timers SET grp = $1, kind = $2, subject = $3, fire_at = $4, due_at = $5, until_at = $6, payload = $7,
				state = 'pending', code = '', reason = '', next_key = '', holder = '', lease_until = NULL, created_at = $8, done_at = NULL WHERE key = $9`,
				t.Group, t.Kind, t.Subject, ts(t.FireAt), ts(timerDue(t)), ts(t.Until), timerPayload(t), ts(now), t.Key)
		case errors.Is(err, pgx.ErrNoRows):
			err = insertTimer(ctx, tx, t, now)
		}
		if err != nil {
			return err
		}
		added = true
		got, err = scanTimer(tx.QueryRow(ctx, `SELECT `+timerColumns+` FROM timers t WHERE t.key = $1`, t.Key))
		return err
	})
	if err != nil {
		return meetingbot.Timer{}, false, fmt.Errorf("postgres: add timer %s: %w", t.Key, s.lost(err))
	}
	return got, added, nil
}

func insertTimer(ctx context.Context, tx pgx.Tx, t meetingbot.Timer, now time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO timers (key, grp, kind, subject, fire_at, due_at, until_at, payload, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
		t.Key, t.Group, t.Kind, t.Subject, ts(t.FireAt), ts(timerDue(t)), ts(t.Until), timerPayload(t), ts(now))
	return err
}

// NextTimers returns the pending timers due by now that this replica may
// take (none held by another live replica, judged with the database's
// clock), earliest first, and when the next of the others falls due: the
// due instant of one not yet due, or the end of the lease of one another
// replica holds, told on the caller's clock (now plus what the lease has
// left by the database's), or zero when there is none; and how many
// timers are pending in all, from one read.
func (s *Store) NextTimers(ctx context.Context, now time.Time) (due []meetingbot.Timer, next time.Time, pending int, err error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	soonest := func(at time.Time) {
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	var held bool
	var dbAt time.Time
	rows, err := s.pool.Query(ctx, `SELECT `+timerColumns+`, `+heldElsewhere+`, `+dbNow+`
		FROM timers t WHERE t.state = 'pending' ORDER BY t.due_at, t.key`, s.now(), s.owner)
	if err != nil {
		return nil, time.Time{}, 0, fmt.Errorf("postgres: %s: next timers: %w", s.where, s.lost(err))
	}
	defer rows.Close()
	for rows.Next() {
		t, err := scanTimer(rows, &held, &dbAt)
		if err != nil {
			return nil, time.Time{}, 0, fmt.Errorf("postgres: %s: next timers: %w", s.where, err)
		}
		pending++
		switch {
		case held:
			if left := t.LeaseUntil.Sub(dbAt); left > 0 {
				soonest(now.Add(left))
			}
		case t.DueAt.After(now):
			soonest(t.DueAt)
		default:
			due = append(due, t)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, time.Time{}, 0, fmt.Errorf("postgres: %s: next timers: %w", s.where, s.lost(err))
	}
	return due, next, pending, nil
}

// TakeTimer takes the pending timer key for this replica, its lease
// running for lease from the database's now, if it is due by now and no
// other live replica holds it; it returns the timer and true, else what it
// found and false.
func (s *Store) TakeTimer(ctx context.Context, key string, now time.Time, lease time.Duration) (meetingbot.Timer, bool, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `UPDATE timers t SET holder = $2, lease_until = `+dbNow+` + $3::bigint * interval '1 millisecond', attempts = t.attempts + 1
		WHERE t.key = $4 AND t.state = 'pending' AND t.due_at <= $5 AND NOT `+heldElsewhere+`
		RETURNING `+timerColumns, s.now(), s.owner, lease.Milliseconds(), key, ts(now))
	taken, err := collectTimers(rows, err)
	if err != nil {
		return meetingbot.Timer{}, false, fmt.Errorf("postgres: %s: take timer %s: %w", s.where, key, s.lost(err))
	}
	if len(taken) == 1 {
		return taken[0], true, nil
	}
	t, _, err := s.Timer(ctx, key)
	return t, false, err
}

func timerHeld(tag pgconn.CommandTag, err error, op, key string) error {
	switch {
	case err != nil:
		return fmt.Errorf("postgres: %s timer %s: %w", op, key, err)
	case tag.RowsAffected() == 0:
		return fmt.Errorf("postgres: %s timer %s: %w", op, key, meetingbot.ErrTimerLost)
	}
	return nil
}

// FinishTimer ends a timer this replica holds with t's State, Code and
// Reason, at now. A timer cancelled while it was being fired is ended
// too: the state then says what was done. It returns
// meetingbot.ErrTimerLost if this replica no longer holds it.
func (s *Store) FinishTimer(ctx context.Context, t meetingbot.Timer, now time.Time) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	tag, err := s.exec(ctx, `UPDATE timers SET state = $1, code = $2, reason = $3, done_at = $4, holder = '', lease_until = NULL
		WHERE key = $5 AND holder = $6 AND state IN ('pending', 'cancelled')`, string(t.State), string(t.Code), t.Reason, ts(now), t.Key, s.owner)
	return timerHeld(tag, s.lost(err), "finish", t.Key)
}

// MoveTimer ends the timer old, which this replica holds, as moved to
// next (its meeting moved), and stores next pending, in one transaction;
// a timer of next's key that ended (the meeting moved back to a start it
// had) waits again as next says. The ledger's claims keep a DM already
// sent under that key from going out twice.
// It returns meetingbot.ErrTimerLost if this replica no longer holds old.
func (s *Store) MoveTimer(ctx context.Context, old, next meetingbot.Timer, now time.Time) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE timers SET state = 'moved', code = $1, reason = $2, next_key = $3, done_at = $4, holder = '', lease_until = NULL
			WHERE key = $5 AND holder = $6 AND state = 'pending'`, string(meetingbot.ReasonMeetingMoved), old.Reason, next.Key, ts(now), old.Key, s.owner)
		if err := timerHeld(tag, err, "move", old.Key); err != nil {
			return err
		}
		// The meeting may move back to a start it had: the timer of that
		// key, ended as moved, waits again.
		return upsertMoved(ctx, tx, next, now)
	})
	if err != nil && !errors.Is(err, meetingbot.ErrTimerLost) {
		return fmt.Errorf("postgres: move timer %s: %w", old.Key, s.lost(err))
	}
	return err
}

// upsertMoved stores next pending, the timer a moved one goes on as: a
// timer of its key that ended (the meeting moved back to a start it had)
// waits again as next says.
func upsertMoved(ctx context.Context, tx pgx.Tx, next meetingbot.Timer, now time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO timers (key, grp, kind, subject, fire_at, due_at, until_at, payload, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (key) DO UPDATE SET grp = excluded.grp, kind = excluded.kind, subject = excluded.subject, fire_at = excluded.fire_at,
			due_at = excluded.due_at, until_at = excluded.until_at, payload = excluded.payload, created_at = excluded.created_at,
			state = 'pending', code = '', reason = '', next_key = '', holder = '', lease_until = NULL, done_at = NULL
		WHERE timers.state <> 'pending'`,
		next.Key, next.Group, next.Kind, next.Subject, ts(next.FireAt), ts(timerDue(next)), ts(next.Until), timerPayload(next), ts(now))
	return err
}

// RekeyTimer ends the pending timer key as moved to next, with reason,
// and stores next pending (a timer of next's key that ended waits again
// as next says), in one transaction, when key's instant and its next try
// are both after now and no replica holds it: a wait whose meeting moved
// before the wait came. It reports whether it did; a timer due, being
// fired or ended is left to its fire, which checks its meeting anyway.
func (s *Store) RekeyTimer(ctx context.Context, key string, next meetingbot.Timer, reason string, now time.Time) (bool, error) {
	if next.Key == "" || next.Key == key || next.Kind == "" || next.FireAt.IsZero() {
		return false, fmt.Errorf("postgres: rekey timer %s to %q: %w", key, next.Key, meetingbot.ErrInvalid)
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	moved := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE timers SET state = 'moved', code = $1, reason = $2, next_key = $3, done_at = $4
			WHERE key = $5 AND state = 'pending' AND holder = '' AND fire_at > $4 AND due_at > $4`,
			string(meetingbot.ReasonMeetingMoved), reason, next.Key, ts(now), key)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		moved = true
		return upsertMoved(ctx, tx, next, now)
	})
	if err != nil {
		return false, fmt.Errorf("postgres: %s: rekey timer %s to %s: %w", s.where, key, next.Key, s.lost(err))
	}
	return moved, nil
}

// RetryTimer gives back a timer this replica holds, to be tried again at
// at (a failure a retry may mend), saying why in reason. It returns
// meetingbot.ErrTimerLost if this replica no longer holds it.
func (s *Store) RetryTimer(ctx context.Context, t meetingbot.Timer, at time.Time, reason string) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	tag, err := s.exec(ctx, `UPDATE timers SET due_at = $1, reason = $2, holder = '', lease_until = NULL
		WHERE key = $3 AND holder = $4 AND state = 'pending'`, ts(at), reason, t.Key, s.owner)
	return timerHeld(tag, s.lost(err), "retry", t.Key)
}

// CancelTimer cancels the pending timer key of subject at now, and
// returns it and true; false when there is no such pending timer.
func (s *Store) CancelTimer(ctx context.Context, key, subject string, now time.Time) (meetingbot.Timer, bool, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `UPDATE timers t SET state = 'cancelled', code = $1, reason = 'cancelled by its person', done_at = $2
		WHERE t.key = $3 AND t.subject = $4 AND t.state = 'pending' RETURNING `+timerColumns,
		string(meetingbot.ReasonCancelledByUser), ts(now), key, subject)
	got, err := collectTimers(rows, err)
	if err != nil {
		return meetingbot.Timer{}, false, fmt.Errorf("postgres: %s: cancel timer %s: %w", s.where, key, s.lost(err))
	}
	if len(got) == 0 {
		return meetingbot.Timer{}, false, nil
	}
	return got[0], true, nil
}

// Timer returns the timer key, and whether there is one.
func (s *Store) Timer(ctx context.Context, key string) (meetingbot.Timer, bool, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	t, err := scanTimer(s.pool.QueryRow(ctx, `SELECT `+timerColumns+` FROM timers t WHERE t.key = $1`, key))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return meetingbot.Timer{}, false, nil
	case err != nil:
		return meetingbot.Timer{}, false, fmt.Errorf("postgres: %s: timer %s: %w", s.where, key, s.lost(err))
	}
	return t, true, nil
}

// PendingTimers returns the pending timers of subject (of everyone when
// it is empty), by fire instant.
func (s *Store) PendingTimers(ctx context.Context, subject string) ([]meetingbot.Timer, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT `+timerColumns+` FROM timers t
		WHERE t.state = 'pending' AND ($1 = '' OR t.subject = $1) ORDER BY t.fire_at, t.key`, subject)
	out, err := collectTimers(rows, err)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: pending timers: %w", s.where, s.lost(err))
	}
	return out, nil
}

// TimerRange returns the timers, in any state, whose fire instant is in
// [from, to), by fire instant.
func (s *Store) TimerRange(ctx context.Context, from, to time.Time) ([]meetingbot.Timer, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT `+timerColumns+` FROM timers t WHERE t.fire_at >= $1 AND t.fire_at < $2 ORDER BY t.fire_at, t.key`, ts(from), ts(to))
	out, err := collectTimers(rows, err)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: timer range: %w", s.where, s.lost(err))
	}
	return out, nil
}

// PruneTimers deletes the ended timers whose instant is before before, and
// returns how many.
func (s *Store) PruneTimers(ctx context.Context, before time.Time) (int64, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	tag, err := s.exec(ctx, `DELETE FROM timers WHERE fire_at < $1 AND state <> 'pending'`, ts(before))
	if err != nil {
		return 0, fmt.Errorf("postgres: %s: prune timers: %w", s.where, s.lost(err))
	}
	return tag.RowsAffected(), nil
}
