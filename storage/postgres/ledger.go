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

const entryColumns = `l.subscription, l.kind, l.key, l.event_id, l.offset_ms, l.start_at, l.trigger_at, l.outcome, l.code, l.reason,
	l.retryable, l.late, l.attempts, l.channel, l.message_ts, l.owner, l.lease_until, l.claimed_at, l.settled_at,
	l.edit, l.edit_to, l.edits, l.edited_at, l.edit_code, l.edit_reason, l.edit_owner, l.edit_lease_until`

// ownerColumns say, beside a ledger row, whether its owner has a row in
// replicas (it has not closed), whether its heartbeat is fresh, and
// whether the row's claim lease and its edit lease run, all by the
// database's clock ($1, see dbNow).
const ownerColumns = `r.owner IS NOT NULL, coalesce(r.alive_until > ` + dbNow + `, false),
	coalesce(l.lease_until > ` + dbNow + `, false), coalesce(l.edit_lease_until > ` + dbNow + `, false),
	greatest(r.alive_until, l.lease_until) - ` + dbNow

// fromLedger joins each ledger row to its owner's replica row.
const fromLedger = ` FROM ledger l LEFT JOIN replicas r ON r.owner = l.owner`

// row is a ledger entry with what is known of its owner and its leases.
type row struct {
	meetingbot.Entry
	registered, alive        bool
	leaseRuns, editLeaseRuns bool
	// heldFor is how long from the database's now the claim stays its
	// owner's at least: until its heartbeat or its lease ends, whichever
	// is later (NULL when there is neither).
	heldFor pgtype.Interval
}

func scanEntry(r pgx.Row, extra ...any) (meetingbot.Entry, error) {
	var e meetingbot.Entry
	var offset int64
	var start, trigger time.Time
	var lease, claimed, settled, movedTo, edited, editLease pgtype.Timestamptz
	var kind, outcome, code, editKind, editCode string
	dest := append([]any{&e.Subscription, &kind, &e.Key, &e.EventID, &offset, &start, &trigger, &outcome, &code, &e.Reason,
		&e.Retryable, &e.Late, &e.Attempts, &e.Channel, &e.MessageTS, &e.Owner, &lease, &claimed, &settled,
		&editKind, &movedTo, &e.Edit.Count, &edited, &editCode, &e.Edit.Reason, &e.Edit.Owner, &editLease}, extra...)
	if err := r.Scan(dest...); err != nil {
		return meetingbot.Entry{}, err
	}
	e.Kind, e.Outcome, e.Code = meetingbot.Kind(kind), meetingbot.Outcome(outcome), meetingbot.ReasonCode(code)
	e.Edit.Kind, e.Edit.Code = meetingbot.EditKind(editKind), meetingbot.ReasonCode(editCode)
	e.Edit.MovedTo, e.Edit.At, e.Edit.LeaseUntil = instant(movedTo), instant(edited), instant(editLease)
	e.Offset = time.Duration(offset) * time.Millisecond
	e.Start, e.TriggerAt = start.UTC(), trigger.UTC()
	e.LeaseUntil, e.ClaimedAt, e.RecordedAt = instant(lease), instant(claimed), instant(settled)
	return e, nil
}

func scanRow(r pgx.Row) (row, error) {
	var out row
	var err error
	out.Entry, err = scanEntry(r, &out.registered, &out.alive, &out.leaseRuns, &out.editLeaseRuns, &out.heldFor)
	return out, err
}

// instant reads a nullable timestamptz: NULL is the zero time.
func instant(v pgtype.Timestamptz) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return v.Time.UTC()
}

// ts writes an instant to the millisecond, as SQLite keeps it; the zero
// time is NULL.
func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Truncate(time.Millisecond)
}

// Claim takes the key e.Key of e.Subscription for this Store for
// leaseUntil - now, if it is free, and returns what it found (the previous
// entry, if any) and whether the caller now holds the claim (Claimed or
// Orphaned). Busy's entry has, as its LeaseUntil, when the claim may be
// free at the earliest (its owner's heartbeat or its lease ending,
// whichever is later), on the caller's clock. now is the instant of the claim on the caller's clock: leases
// start when they are taken.
//
// Leases are written and judged on the database's clock (its now(), or
// Options.Now), as the subscription leases and the heartbeats are: the
// claim's claimed_at is the database's now and its lease_until that plus
// the lease's length, so that a replica whose clock runs ahead neither
// writes a lease that lasts longer nor takes another's claim early. The
// caller's instants count only as a length, and as this process's clock
// for Renew (see skew).
//
// A claim in flight is another replica's while that replica's heartbeat
// is fresh or the claim's lease runs (see the package comment); it is free
// when its owner released it, closed, or is past both. A claim of this
// Store's own is free too: the caller knows whether it is still working on
// it.
func (s *Store) Claim(ctx context.Context, e meetingbot.Entry, now, leaseUntil time.Time) (meetingbot.ClaimStatus, meetingbot.Entry, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	lease := leaseUntil.Sub(now).Milliseconds()
	// A new key, the common case, is one statement.
	var at time.Time
	err := s.pool.QueryRow(ctx, `INSERT INTO ledger (subscription, key, event_id, offset_ms, start_at, trigger_at,
			outcome, late, attempts, owner, lease_until, claimed_at, kind)
		VALUES ($2, $3, $4, $5, $6, $7, 'sending', $8, 1, $9, `+dbNowMS+` + $10::bigint * interval '1 millisecond', `+dbNowMS+`, $11)
		ON CONFLICT (subscription, key) DO NOTHING RETURNING claimed_at`,
		s.now(), e.Subscription, e.Key, e.EventID, e.Offset.Milliseconds(), ts(e.Start), ts(e.TriggerAt), e.Late, s.owner, lease, string(e.Kind)).Scan(&at)
	switch {
	case err == nil:
		s.noteSkew(at, now)
		return meetingbot.Claimed, meetingbot.Entry{}, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return 0, meetingbot.Entry{}, fmt.Errorf("postgres: claim %s: %w", e.Key, s.lost(err))
	}
	// A known key is judged under its row's lock.
	status := meetingbot.Claimed
	var prev row
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		prev, err = scanRow(tx.QueryRow(ctx, `SELECT `+entryColumns+`, `+ownerColumns+fromLedger+`
			WHERE l.subscription = $2 AND l.key = $3 FOR UPDATE OF l`, s.now(), e.Subscription, e.Key))
		if err != nil {
			return err
		}
		switch {
		case prev.Final():
			status = meetingbot.Done
			return nil
		case prev.Outcome == meetingbot.Sending && s.heldByOther(prev):
			status = meetingbot.Busy
			// When the claim may be free, told on the caller's clock.
			if prev.heldFor.Valid {
				prev.LeaseUntil = now.Add(interval(prev.heldFor))
			}
			return nil
		case prev.Outcome == meetingbot.Sending:
			status = meetingbot.Orphaned
		}
		return tx.QueryRow(ctx, `UPDATE ledger SET outcome = 'sending', retryable = false, attempts = attempts + 1,
				owner = $2, lease_until = `+dbNowMS+` + $3::bigint * interval '1 millisecond', claimed_at = `+dbNowMS+`
			WHERE subscription = $4 AND key = $5 RETURNING claimed_at`,
			s.now(), s.owner, lease, e.Subscription, e.Key).Scan(&at)
	})
	if err != nil {
		return 0, meetingbot.Entry{}, fmt.Errorf("postgres: claim %s: %w", e.Key, s.lost(err))
	}
	if status != meetingbot.Done && status != meetingbot.Busy {
		s.noteSkew(at, now)
	}
	return status, prev.Entry, nil
}

// noteSkew remembers how far the database's clock (dbAt, the instant it
// wrote a claim at) is ahead of the caller's (now, the instant the caller
// gave the claim, read before it was sent): Renew moves a lease to an
// instant of the caller's clock, which this turns into the database's.
// The caller's now is read before the statement reaches the database, so
// the skew errs towards a later instant, a lease a little longer, never a
// shorter one.
func (s *Store) noteSkew(dbAt, now time.Time) {
	s.skew.Store(int64(dbAt.Sub(now)))
}

// onDBClock turns an instant of the caller's clock into the database's.
func (s *Store) onDBClock(t time.Time) time.Time {
	return t.Add(time.Duration(s.skew.Load()))
}

// heldByOther reports whether a claim in flight belongs to another replica
// that may still finish it; see Claim.
func (s *Store) heldByOther(r row) bool {
	switch {
	case r.Owner == "" || r.Owner == s.owner:
		return false
	case !r.registered:
		return false // it closed, its sends recorded, or it has been gone for an hour
	default:
		return r.alive || r.leaseRuns
	}
}

// Record ends a claim this Store holds with the outcome in e: Outcome,
// Code, Reason, Retryable, Late, Channel and MessageTS are taken from e. It
// returns meetingbot.ErrClaimLost if the claim is no longer this Store's.
func (s *Store) Record(ctx context.Context, e meetingbot.Entry, now time.Time) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	tag, err := s.exec(ctx, `UPDATE ledger SET outcome = $1, code = $2, reason = $3, retryable = $4, late = $5,
			channel = $6, message_ts = $7, settled_at = $8, lease_until = NULL
		WHERE subscription = $9 AND key = $10 AND outcome = 'sending' AND owner = $11`,
		string(e.Outcome), string(e.Code), e.Reason, e.Retryable, e.Late, e.Channel, e.MessageTS, ts(now), e.Subscription, e.Key, s.owner)
	return claimHeld(tag, err, "record", e.Key)
}

// Renew extends a claim this Store holds to leaseUntil, an instant of the
// clock the claim's now was of, written on the database's (see Claim), so
// that a send about to start is covered by its lease from start to end.
// It returns meetingbot.ErrClaimLost if the claim is no longer this
// Store's.
func (s *Store) Renew(ctx context.Context, e meetingbot.Entry, leaseUntil time.Time) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	tag, err := s.exec(ctx, `UPDATE ledger SET lease_until = $1
		WHERE subscription = $2 AND key = $3 AND outcome = 'sending' AND owner = $4`, ts(s.onDBClock(leaseUntil)), e.Subscription, e.Key, s.owner)
	return claimHeld(tag, err, "renew", e.Key)
}

// Release gives up a claim this Store holds whose send ended without an
// answer (Slack may hold the message), saying why in reason. The entry
// stays in flight with no owner: whoever claims it next, this replica or
// another, gets Orphaned and looks in Slack before sending again. It
// returns meetingbot.ErrClaimLost if the claim is no longer this Store's.
func (s *Store) Release(ctx context.Context, e meetingbot.Entry, reason string) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	tag, err := s.exec(ctx, `UPDATE ledger SET owner = '', lease_until = NULL, code = 'unconfirmed', reason = $1
		WHERE subscription = $2 AND key = $3 AND outcome = 'sending' AND owner = $4`, reason, e.Subscription, e.Key, s.owner)
	return claimHeld(tag, err, "release", e.Key)
}

func claimHeld(tag pgconn.CommandTag, err error, op, key string) error {
	switch {
	case err != nil:
		return fmt.Errorf("postgres: %s %s: %w", op, key, err)
	case tag.RowsAffected() == 0:
		return fmt.Errorf("postgres: %s %s: %w", op, key, meetingbot.ErrClaimLost)
	}
	return nil
}

// Entries returns the ledger entries of subscription among keys, by key.
func (s *Store) Entries(ctx context.Context, subscription string, keys []string) (map[string]meetingbot.Entry, error) {
	out := make(map[string]meetingbot.Entry, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	err := s.each(ctx, `SELECT `+entryColumns+` FROM ledger l WHERE l.subscription = $1 AND l.key = ANY($2)`,
		[]any{subscription, keys}, func(e meetingbot.Entry) { out[e.Key] = e })
	if err != nil {
		return nil, fmt.Errorf("postgres: entries of %s: %w", subscription, err)
	}
	return out, nil
}

// Orphans returns the claims of subscription (of every subscription when
// it is empty) still in flight that no other live replica may finish (see
// Claim): this Store's own, released ones, and those of replicas gone.
// The caller skips its own claims that it is still working on. Leases
// and heartbeats are judged by the database's clock, not by now.
func (s *Store) Orphans(ctx context.Context, subscription string, now time.Time) ([]meetingbot.Entry, error) {
	rows, err := s.rows(ctx, `WHERE l.outcome = 'sending' AND ($2 = '' OR l.subscription = $2)`, subscription)
	if err != nil {
		return nil, fmt.Errorf("postgres: orphans: %w", err)
	}
	var out []meetingbot.Entry
	for _, r := range rows {
		if !s.heldByOther(r) {
			out = append(out, r.Entry)
		}
	}
	return out, nil
}

// Stalled returns the claims in flight of other replicas that may be free
// within d of now: their owner's heartbeat and their lease both end by
// then, or have ended. A live replica beats once an interval and its
// heartbeat lasts LeaseTicks of them, so with d an interval only a
// replica that has missed a beat (killed, or cut off from the database)
// shows here, before its claims are free; the caller asks for them again
// the moment they may be, whether or not it sweeps their subscription
// (whose lease, still the dead replica's, would reach it a round later).
// Each entry's LeaseUntil is that instant on the caller's clock, now's.
func (s *Store) Stalled(ctx context.Context, d time.Duration, now time.Time) ([]meetingbot.Entry, error) {
	rows, err := s.rows(ctx, `WHERE l.outcome = 'sending' AND l.owner <> '' AND l.owner <> $2
		AND coalesce(greatest(r.alive_until, l.lease_until), `+dbNow+`) <= `+dbNow+` + $3::bigint * interval '1 millisecond'`,
		s.owner, d.Milliseconds())
	if err != nil {
		return nil, fmt.Errorf("postgres: stalled claims: %w", err)
	}
	out := make([]meetingbot.Entry, len(rows))
	for i, r := range rows {
		r.LeaseUntil = now
		if r.heldFor.Valid {
			r.LeaseUntil = now.Add(max(0, interval(r.heldFor)))
		}
		out[i] = r.Entry
	}
	return out, nil
}

// rows reads the ledger rows, each with what is known of its owner, that
// where (a WHERE clause whose $1 is dbNow's) selects with args as $2 on.
func (s *Store) rows(ctx context.Context, where string, args ...any) ([]row, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT `+entryColumns+`, `+ownerColumns+fromLedger+` `+where, append([]any{s.now()}, args...)...)
	if err != nil {
		return nil, s.lost(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) { return scanRow(r) })
	if err != nil {
		return nil, s.lost(err)
	}
	return out, nil
}

// interval is the length of a PostgreSQL interval of days and
// microseconds (a difference of timestamps has no months).
func interval(v pgtype.Interval) time.Duration {
	return time.Duration(v.Microseconds)*time.Microsecond + time.Duration(v.Days)*24*time.Hour
}

// Range returns the ledger entries whose trigger time is in [from, to), for
// every subscription when subscription is empty, ordered by trigger time.
func (s *Store) Range(ctx context.Context, subscription string, from, to time.Time) ([]meetingbot.Entry, error) {
	var out []meetingbot.Entry
	err := s.each(ctx, `SELECT `+entryColumns+` FROM ledger l WHERE l.trigger_at >= $1 AND l.trigger_at < $2 AND ($3 = '' OR l.subscription = $3)
		ORDER BY l.trigger_at, l.subscription, l.key`, []any{ts(from), ts(to), subscription}, func(e meetingbot.Entry) { out = append(out, e) })
	if err != nil {
		return nil, fmt.Errorf("postgres: ledger range: %w", err)
	}
	return out, nil
}

func (s *Store) each(ctx context.Context, q string, args []any, fn func(meetingbot.Entry)) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return s.lost(err)
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return s.lost(err)
		}
		fn(e)
	}
	return s.lost(rows.Err())
}

// Count returns the number of ledger rows.
func (s *Store) Count(ctx context.Context) (int64, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM ledger`).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: count ledger: %w", s.lost(err))
	}
	return n, nil
}

// Prune deletes the ledger rows whose meeting started before before, and
// returns how many it deleted: settled rows, and claims left in flight that
// nobody will resolve any more (a subscription removed, say). Claims of
// this Store are kept, in case one is still being worked on.
func (s *Store) Prune(ctx context.Context, before time.Time) (int64, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	tag, err := s.exec(ctx, `DELETE FROM ledger WHERE start_at < $1 AND (outcome <> 'sending' OR owner <> $2)`, ts(before), s.owner)
	if err != nil {
		return 0, fmt.Errorf("postgres: prune ledger: %w", err)
	}
	return tag.RowsAffected(), nil
}

// Cursor returns subscription's cursor, the instant up to which its sweep
// is complete, and whether it has one.
func (s *Store) Cursor(ctx context.Context, subscription string) (time.Time, bool, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	var at time.Time
	err := s.pool.QueryRow(ctx, `SELECT at FROM cursors WHERE subscription = $1`, subscription).Scan(&at)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return time.Time{}, false, nil
	case err != nil:
		return time.Time{}, false, fmt.Errorf("postgres: cursor of %s: %w", subscription, s.lost(err))
	}
	return at.UTC(), true, nil
}

// Cursors returns every subscription's cursor: the instant up to which its
// sweep is complete.
func (s *Store) Cursors(ctx context.Context) (map[string]time.Time, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT subscription, at FROM cursors`)
	if err != nil {
		return nil, fmt.Errorf("postgres: cursors: %w", s.lost(err))
	}
	out := map[string]time.Time{}
	var sub string
	var at time.Time
	if _, err := pgx.ForEachRow(rows, []any{&sub, &at}, func() error { out[sub] = at.UTC(); return nil }); err != nil {
		return nil, fmt.Errorf("postgres: cursors: %w", s.lost(err))
	}
	return out, nil
}

// AdvanceCursors moves each given subscription's cursor forward to the given
// instant, in one statement. A cursor never moves back: when replicas
// share the database, the further one wins.
func (s *Store) AdvanceCursors(ctx context.Context, cursors map[string]time.Time) error {
	if len(cursors) == 0 {
		return nil
	}
	subs := make([]string, 0, len(cursors))
	ats := make([]time.Time, 0, len(cursors))
	for sub, at := range cursors {
		subs = append(subs, sub)
		ats = append(ats, at.UTC().Truncate(time.Millisecond))
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	_, err := s.exec(ctx, `INSERT INTO cursors (subscription, at) SELECT * FROM unnest($1::text[], $2::timestamptz[])
		ON CONFLICT (subscription) DO UPDATE SET at = greatest(cursors.at, excluded.at)`, subs, ats)
	if err != nil {
		return fmt.Errorf("postgres: advance cursors: %w", err)
	}
	return nil
}
