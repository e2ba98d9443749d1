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

// statements are the ledger's hot statements, prepared once per Store.
type statements struct {
	claimSelect, claimInsert, claimUpdate, record, renew, release, cursor *sql.Stmt
	followed, orphans, orphansOf, entries                                 *sql.Stmt
	// The mirror's, which every sweep reads and every sync writes.
	calendarSync, mirrored, mirrorUpsert, mirrorDelete, syncUpsert *sql.Stmt
}

func (s *Store) prepare(ctx context.Context) error {
	for _, p := range []struct {
		to *(*sql.Stmt)
		q  string
	}{
		{&s.stmt.claimSelect, `SELECT ` + entryColumns + ` FROM ledger WHERE subscription = ? AND key = ?`},
		{&s.stmt.claimInsert, `INSERT INTO ledger (subscription, kind, key, event_id, offset_ms, start_ms, trigger_ms,
			outcome, late, attempts, owner, lease_until_ms, claimed_ms) VALUES (?, ?, ?, ?, ?, ?, ?, 'sending', ?, 1, ?, ?, ?)`},
		{&s.stmt.claimUpdate, `UPDATE ledger SET outcome = 'sending', retryable = 0, attempts = attempts + 1,
			owner = ?, lease_until_ms = ?, claimed_ms = ? WHERE subscription = ? AND key = ?`},
		{&s.stmt.record, `UPDATE ledger SET outcome = ?, code = ?, reason = ?, retryable = ?, late = ?,
			channel = ?, message_ts = ?, settled_ms = ?, lease_until_ms = 0
			WHERE subscription = ? AND key = ? AND outcome = 'sending' AND owner = ?`},
		{&s.stmt.renew, `UPDATE ledger SET lease_until_ms = ?
			WHERE subscription = ? AND key = ? AND outcome = 'sending' AND owner = ?`},
		// The keys as one JSON array: one statement, prepared once, for
		// any number of keys (an IN list of placeholders is parsed anew
		// for each length).
		{&s.stmt.entries, `SELECT ` + entryColumns + ` FROM ledger
			WHERE subscription = ? AND key IN (SELECT value FROM json_each(?))`},
		{&s.stmt.cursor, `SELECT at_ms FROM cursors WHERE subscription = ?`},
		{&s.stmt.orphans, `SELECT ` + entryColumns + ` FROM ledger WHERE outcome = 'sending'`},
		{&s.stmt.orphansOf, `SELECT ` + entryColumns + ` FROM ledger WHERE outcome = 'sending' AND subscription = ?`},
		{&s.stmt.release, `UPDATE ledger SET owner = '', lease_until_ms = 0, code = 'unconfirmed', reason = ?
			WHERE subscription = ? AND key = ? AND outcome = 'sending' AND owner = ?`},
		{&s.stmt.followed, followedQuery},
		{&s.stmt.calendarSync, `SELECT token, from_ms, horizon_ms, full_ms, synced_ms FROM calendar_sync WHERE calendar = ?`},
		{&s.stmt.mirrored, `SELECT meeting FROM calendar_instances
			WHERE calendar = ? AND start_ms > ? AND start_ms <= ? ORDER BY start_ms, id`},
		{&s.stmt.mirrorUpsert, `INSERT INTO calendar_instances (calendar, id, start_ms, meeting) VALUES (?, ?, ?, ?)
			ON CONFLICT (calendar, id) DO UPDATE SET start_ms = excluded.start_ms, meeting = excluded.meeting`},
		{&s.stmt.mirrorDelete, `DELETE FROM calendar_instances WHERE calendar = ? AND id = ?`},
		{&s.stmt.syncUpsert, `INSERT INTO calendar_sync (calendar, token, from_ms, horizon_ms, full_ms, synced_ms) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (calendar) DO UPDATE SET token = excluded.token, from_ms = excluded.from_ms, horizon_ms = excluded.horizon_ms,
				full_ms = excluded.full_ms, synced_ms = excluded.synced_ms`},
	} {
		stmt, err := s.db.PrepareContext(ctx, p.q)
		if err != nil {
			return fmt.Errorf("storage: prepare: %w", err)
		}
		*p.to = stmt
	}
	return nil
}

const entryColumns = `subscription, kind, key, event_id, offset_ms, start_ms, trigger_ms, outcome, code, reason,
	retryable, late, attempts, channel, message_ts, owner, lease_until_ms, claimed_ms, settled_ms,
	edit, edit_to_ms, edits, edited_ms, edit_code, edit_reason, edit_owner, edit_lease_ms`

func scanEntry(row interface{ Scan(...any) error }) (meetingbot.Entry, error) {
	var e meetingbot.Entry
	var offset, start, trigger, lease, claimed, settled, movedTo, edited, editLease int64
	var retryable, late int
	err := row.Scan(&e.Subscription, &e.Kind, &e.Key, &e.EventID, &offset, &start, &trigger, &e.Outcome, &e.Code, &e.Reason,
		&retryable, &late, &e.Attempts, &e.Channel, &e.MessageTS, &e.Owner, &lease, &claimed, &settled,
		&e.Edit.Kind, &movedTo, &e.Edit.Count, &edited, &e.Edit.Code, &e.Edit.Reason, &e.Edit.Owner, &editLease)
	e.Offset = time.Duration(offset) * time.Millisecond
	e.Start, e.TriggerAt = fromMS(start), fromMS(trigger)
	e.LeaseUntil, e.ClaimedAt, e.RecordedAt = fromMS(lease), fromMS(claimed), fromMS(settled)
	e.Edit.MovedTo, e.Edit.At, e.Edit.LeaseUntil = fromMS(movedTo), fromMS(edited), fromMS(editLease)
	e.Retryable, e.Late = retryable != 0, late != 0
	return e, err
}

// Claim takes the key e.Key of e.Subscription for this Store until
// leaseUntil, if it is free, and returns what it found (the previous entry,
// if any) and whether the caller now holds the claim (Claimed or Orphaned).
// now is the instant of the claim: leases start when they are taken.
//
// A claim in flight is free only when it can no longer be finished by its
// owner: the owner released it (its send ended unconfirmed), the owner's
// process is gone, or, where liveness cannot be told, its lease ran out. A
// claim of this Store's own is free too: the caller knows whether it is
// still working on it.
//
// Leases are written and judged on the callers' clock, which is right for
// SQLite where it is not for PostgreSQL (whose store uses the database's):
// every process that shares a SQLite file runs on the machine that holds
// it (SQLite's own locking does not work over a network filesystem), so
// they read one clock, and a step of it moves every process's now alike.
// Where flock(2) tells liveness the lease is not even consulted.
func (s *Store) Claim(ctx context.Context, e meetingbot.Entry, now, leaseUntil time.Time) (meetingbot.ClaimStatus, meetingbot.Entry, error) {
	s.write.Lock()
	defer s.write.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, meetingbot.Entry{}, fmt.Errorf("storage: claim %s: %w", e.Key, err)
	}
	defer tx.Rollback()
	prev, err := scanEntry(tx.StmtContext(ctx, s.stmt.claimSelect).QueryRowContext(ctx, e.Subscription, e.Key))
	found := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, meetingbot.Entry{}, fmt.Errorf("storage: claim %s: %w", e.Key, err)
	}
	status := meetingbot.Claimed
	switch {
	case !found:
		_, err = tx.StmtContext(ctx, s.stmt.claimInsert).ExecContext(ctx, e.Subscription, e.Kind, e.Key, e.EventID, e.Offset.Milliseconds(), ms(e.Start), ms(e.TriggerAt),
			e.Late, s.owner, ms(leaseUntil), ms(now))
	case prev.Final():
		return meetingbot.Done, prev, nil
	case prev.Outcome == meetingbot.Sending && s.heldByOther(prev, now):
		return meetingbot.Busy, prev, nil
	default:
		if prev.Outcome == meetingbot.Sending {
			status = meetingbot.Orphaned
		}
		_, err = tx.StmtContext(ctx, s.stmt.claimUpdate).ExecContext(ctx, s.owner, ms(leaseUntil), ms(now), e.Subscription, e.Key)
	}
	if err != nil {
		return 0, meetingbot.Entry{}, fmt.Errorf("storage: claim %s: %w", e.Key, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, meetingbot.Entry{}, fmt.Errorf("storage: claim %s: %w", e.Key, err)
	}
	return status, prev, nil
}

// heldByOther reports whether a claim in flight belongs to another process
// that may still finish it; see Claim.
func (s *Store) heldByOther(e meetingbot.Entry, now time.Time) bool {
	return s.otherLive(e.Owner, e.LeaseUntil, now)
}

// otherLive reports whether a claim held by owner until leaseUntil belongs
// to another process that may still finish it.
func (s *Store) otherLive(owner string, leaseUntil, now time.Time) bool {
	switch {
	case owner == "" || owner == s.owner:
		return false
	case livenessKnown:
		return ownerAlive(s.path, owner)
	default:
		return leaseUntil.After(now)
	}
}

// ErrClaimLost is returned by Record, Renew and Release when the caller no
// longer holds the claim: another process took the key over. It is
// meetingbot.ErrClaimLost, which the PostgreSQL store returns too.
var ErrClaimLost = meetingbot.ErrClaimLost

// Record ends a claim this Store holds with the outcome in e: Outcome,
// Code, Reason, Retryable, Late, Channel and MessageTS are taken from e. It
// returns ErrClaimLost if the claim is no longer this Store's.
func (s *Store) Record(ctx context.Context, e meetingbot.Entry, now time.Time) error {
	s.write.Lock()
	defer s.write.Unlock()
	res, err := s.stmt.record.ExecContext(ctx, e.Outcome, e.Code, e.Reason, e.Retryable, e.Late, e.Channel, e.MessageTS, ms(now), e.Subscription, e.Key, s.owner)
	if err != nil {
		return fmt.Errorf("storage: record %s: %w", e.Key, err)
	}
	return claimHeld(res, "record", e.Key)
}

// Renew extends a claim this Store holds to leaseUntil, so that a send
// about to start is covered by its lease from start to end. It returns
// ErrClaimLost if the claim is no longer this Store's.
func (s *Store) Renew(ctx context.Context, e meetingbot.Entry, leaseUntil time.Time) error {
	s.write.Lock()
	defer s.write.Unlock()
	res, err := s.stmt.renew.ExecContext(ctx, ms(leaseUntil), e.Subscription, e.Key, s.owner)
	if err != nil {
		return fmt.Errorf("storage: renew %s: %w", e.Key, err)
	}
	return claimHeld(res, "renew", e.Key)
}

// Release gives up a claim this Store holds whose send ended without an
// answer (Slack may hold the message), saying why in reason. The entry
// stays in flight with no owner: whoever claims it next, this process or
// another, gets Orphaned and looks in Slack before sending again. It
// returns ErrClaimLost if the claim is no longer this Store's.
func (s *Store) Release(ctx context.Context, e meetingbot.Entry, reason string) error {
	s.write.Lock()
	defer s.write.Unlock()
	res, err := s.stmt.release.ExecContext(ctx, reason, e.Subscription, e.Key, s.owner)
	if err != nil {
		return fmt.Errorf("storage: release %s: %w", e.Key, err)
	}
	return claimHeld(res, "release", e.Key)
}

func claimHeld(res sql.Result, op, key string) error {
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("storage: %s %s: %w", op, key, ErrClaimLost)
	}
	return nil
}

// Entries returns the ledger entries of subscription among keys, by key.
func (s *Store) Entries(ctx context.Context, subscription string, keys []string) (map[string]meetingbot.Entry, error) {
	out := make(map[string]meetingbot.Entry, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	list, err := json.Marshal(keys)
	if err != nil {
		return nil, fmt.Errorf("storage: entries of %s: %w", subscription, err)
	}
	if err := eachRow(ctx, s.stmt.entries, []any{subscription, string(list)}, func(e meetingbot.Entry) { out[e.Key] = e }); err != nil {
		return nil, fmt.Errorf("storage: entries of %s: %w", subscription, err)
	}
	return out, nil
}

// Orphans returns the claims of subscription (of every subscription when
// it is empty) still in flight that no other live process may finish (see
// Claim): this Store's own, released ones, and those of dead owners. The
// caller skips its own claims that it is still working on.
func (s *Store) Orphans(ctx context.Context, subscription string, now time.Time) ([]meetingbot.Entry, error) {
	stmt, args := s.stmt.orphans, []any(nil)
	if subscription != "" {
		stmt, args = s.stmt.orphansOf, []any{subscription}
	}
	var out []meetingbot.Entry
	err := eachRow(ctx, stmt, args, func(e meetingbot.Entry) {
		if !s.heldByOther(e, now) {
			out = append(out, e)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("storage: orphans: %w", err)
	}
	return out, nil
}

// Range returns the ledger entries whose trigger time is in [from, to), for
// every subscription when subscription is empty, ordered by trigger time.
func (s *Store) Range(ctx context.Context, subscription string, from, to time.Time) ([]meetingbot.Entry, error) {
	q := `SELECT ` + entryColumns + ` FROM ledger WHERE trigger_ms >= ? AND trigger_ms < ?`
	args := []any{ms(from), ms(to)}
	if subscription != "" {
		q += ` AND subscription = ?`
		args = append(args, subscription)
	}
	var out []meetingbot.Entry
	if err := s.each(ctx, q+` ORDER BY trigger_ms, subscription, key`, args, func(e meetingbot.Entry) { out = append(out, e) }); err != nil {
		return nil, fmt.Errorf("storage: ledger range: %w", err)
	}
	return out, nil
}

func (s *Store) each(ctx context.Context, q string, args []any, fn func(meetingbot.Entry)) error {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	return scanAll(rows, fn)
}

// eachRow calls fn with each entry stmt selects.
func eachRow(ctx context.Context, stmt *sql.Stmt, args []any, fn func(meetingbot.Entry)) error {
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	return scanAll(rows, fn)
}

func scanAll(rows *sql.Rows, fn func(meetingbot.Entry)) error {
	defer rows.Close()
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return err
		}
		fn(e)
	}
	return rows.Err()
}

// Count returns the number of ledger rows.
func (s *Store) Count(ctx context.Context) (int64, error) {
	var n int64
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM ledger`).Scan(&n); err != nil {
		return 0, fmt.Errorf("storage: count ledger: %w", err)
	}
	return n, nil
}

// Prune deletes the ledger rows whose meeting started before before, and
// returns how many it deleted: settled rows, and claims left in flight that
// nobody will resolve any more (a subscription removed, say). Claims of
// this Store are kept, in case one is still being worked on.
func (s *Store) Prune(ctx context.Context, before time.Time) (int64, error) {
	s.write.Lock()
	defer s.write.Unlock()
	res, err := s.db.ExecContext(ctx, `DELETE FROM ledger WHERE start_ms < ? AND (outcome != 'sending' OR owner != ?)`, ms(before), s.owner)
	if err != nil {
		return 0, fmt.Errorf("storage: prune ledger: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("storage: prune ledger: %w", err)
	}
	return n, nil
}

// Cursor returns subscription's cursor, the instant up to which its sweep
// is complete, and whether it has one.
func (s *Store) Cursor(ctx context.Context, subscription string) (time.Time, bool, error) {
	var at int64
	err := s.stmt.cursor.QueryRowContext(ctx, subscription).Scan(&at)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return time.Time{}, false, nil
	case err != nil:
		return time.Time{}, false, fmt.Errorf("storage: cursor of %s: %w", subscription, err)
	}
	return fromMS(at), true, nil
}

// Cursors returns every subscription's cursor: the instant up to which its
// sweep is complete.
func (s *Store) Cursors(ctx context.Context) (map[string]time.Time, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT subscription, at_ms FROM cursors`)
	if err != nil {
		return nil, fmt.Errorf("storage: cursors: %w", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var sub string
		var at int64
		if err := rows.Scan(&sub, &at); err != nil {
			return nil, fmt.Errorf("storage: cursors: %w", err)
		}
		out[sub] = fromMS(at)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: cursors: %w", err)
	}
	return out, nil
}

// AdvanceCursors moves each given subscription's cursor forward to the given
// instant, in one transaction. A cursor never moves back: when two processes
// share the file, the further one wins.
func (s *Store) AdvanceCursors(ctx context.Context, cursors map[string]time.Time) error {
	s.write.Lock()
	defer s.write.Unlock()
	if len(cursors) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storage: advance cursors: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO cursors (subscription, at_ms) VALUES (?, ?)
		ON CONFLICT (subscription) DO UPDATE SET at_ms = max(at_ms, excluded.at_ms)`)
	if err != nil {
		return fmt.Errorf("storage: advance cursors: %w", err)
	}
	defer stmt.Close()
	for sub, at := range cursors {
		if _, err := stmt.ExecContext(ctx, sub, ms(at)); err != nil {
			return fmt.Errorf("storage: advance cursor of %s: %w", sub, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("storage: advance cursors: %w", err)
	}
	return nil
}
