package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Outcome is the state of a ledger entry.
type Outcome string

// Outcomes. Sending is a claim in flight; the others are settled, except a
// Failed entry with Retryable set, which the next tick may claim again.
const (
	Sending Outcome = "sending"
	Sent    Outcome = "sent"
	Skipped Outcome = "skipped"
	Failed  Outcome = "failed"
)

// Entry is one ledger row: a trigger key of a subscription and what became
// of it. Instants are UTC.
type Entry struct {
	Subscription string
	Key          string
	EventID      string
	Offset       time.Duration
	Start        time.Time // the meeting's start
	TriggerAt    time.Time // Start - Offset
	Outcome      Outcome
	Reason       string // why skipped or failed; how a crash was resolved
	Retryable    bool   // a failed entry the next tick retries
	Late         bool   // found due after its trigger time had passed
	Attempts     int    // claims taken on this key
	Channel      string // Slack channel of the sent message
	MessageTS    string // Slack ts of the sent message
	Owner        string // the process that holds or held the claim
	LeaseUntil   time.Time
	ClaimedAt    time.Time
	SettledAt    time.Time
}

// Settled reports whether nothing more will be done for the entry.
func (e Entry) Settled() bool {
	return e.Outcome != Sending && !(e.Outcome == Failed && e.Retryable)
}

// ClaimStatus says what Claim found and did.
type ClaimStatus int

// Claim statuses.
const (
	// Claimed: the key was free (new, or a retryable failure) and is now the
	// caller's to send.
	Claimed ClaimStatus = iota
	// Orphaned: the key was claimed by a send that may have reached Slack
	// and was never recorded: its process died (or, where liveness cannot
	// be told, its lease ran out), or its send ended unconfirmed and was
	// released. It is now the caller's, who must find out whether the
	// reminder went out before sending again.
	Orphaned
	// Busy: another live process holds the claim. A live owner's claim is
	// never taken, whatever its lease says.
	Busy
	// Done: the key is settled; nothing to do.
	Done
)

func (c ClaimStatus) String() string {
	return [...]string{"claimed", "orphaned", "busy", "done"}[c]
}

// statements are the ledger's hot statements, prepared once per Store.
type statements struct {
	claimSelect, claimInsert, claimUpdate, settle, renew, release *sql.Stmt
}

func (s *Store) prepare(ctx context.Context) error {
	for _, p := range []struct {
		to *(*sql.Stmt)
		q  string
	}{
		{&s.stmt.claimSelect, `SELECT ` + entryColumns + ` FROM ledger WHERE subscription = ? AND key = ?`},
		{&s.stmt.claimInsert, `INSERT INTO ledger (subscription, key, event_id, offset_ms, start_ms, trigger_ms,
			outcome, late, attempts, owner, lease_until_ms, claimed_ms) VALUES (?, ?, ?, ?, ?, ?, 'sending', ?, 1, ?, ?, ?)`},
		{&s.stmt.claimUpdate, `UPDATE ledger SET outcome = 'sending', retryable = 0, attempts = attempts + 1,
			owner = ?, lease_until_ms = ?, claimed_ms = ? WHERE subscription = ? AND key = ?`},
		{&s.stmt.settle, `UPDATE ledger SET outcome = ?, reason = ?, retryable = ?, late = ?,
			channel = ?, message_ts = ?, settled_ms = ?, lease_until_ms = 0
			WHERE subscription = ? AND key = ? AND outcome = 'sending' AND owner = ?`},
		{&s.stmt.renew, `UPDATE ledger SET lease_until_ms = ?
			WHERE subscription = ? AND key = ? AND outcome = 'sending' AND owner = ?`},
		{&s.stmt.release, `UPDATE ledger SET owner = '', lease_until_ms = 0, reason = ?
			WHERE subscription = ? AND key = ? AND outcome = 'sending' AND owner = ?`},
	} {
		stmt, err := s.db.PrepareContext(ctx, p.q)
		if err != nil {
			return fmt.Errorf("storage: prepare: %w", err)
		}
		*p.to = stmt
	}
	return nil
}

const entryColumns = `subscription, key, event_id, offset_ms, start_ms, trigger_ms, outcome, reason,
	retryable, late, attempts, channel, message_ts, owner, lease_until_ms, claimed_ms, settled_ms`

func scanEntry(row interface{ Scan(...any) error }) (Entry, error) {
	var e Entry
	var offset, start, trigger, lease, claimed, settled int64
	var retryable, late int
	err := row.Scan(&e.Subscription, &e.Key, &e.EventID, &offset, &start, &trigger, &e.Outcome, &e.Reason,
		&retryable, &late, &e.Attempts, &e.Channel, &e.MessageTS, &e.Owner, &lease, &claimed, &settled)
	e.Offset = time.Duration(offset) * time.Millisecond
	e.Start, e.TriggerAt = fromMS(start), fromMS(trigger)
	e.LeaseUntil, e.ClaimedAt, e.SettledAt = fromMS(lease), fromMS(claimed), fromMS(settled)
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
func (s *Store) Claim(ctx context.Context, e Entry, now, leaseUntil time.Time) (ClaimStatus, Entry, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, Entry{}, fmt.Errorf("storage: claim %s: %w", e.Key, err)
	}
	defer tx.Rollback()
	prev, err := scanEntry(tx.StmtContext(ctx, s.stmt.claimSelect).QueryRowContext(ctx, e.Subscription, e.Key))
	found := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, Entry{}, fmt.Errorf("storage: claim %s: %w", e.Key, err)
	}
	status := Claimed
	switch {
	case !found:
		_, err = tx.StmtContext(ctx, s.stmt.claimInsert).ExecContext(ctx, e.Subscription, e.Key, e.EventID, e.Offset.Milliseconds(), ms(e.Start), ms(e.TriggerAt),
			e.Late, s.owner, ms(leaseUntil), ms(now))
	case prev.Settled():
		return Done, prev, nil
	case prev.Outcome == Sending && s.heldByOther(prev, now):
		return Busy, prev, nil
	default:
		if prev.Outcome == Sending {
			status = Orphaned
		}
		_, err = tx.StmtContext(ctx, s.stmt.claimUpdate).ExecContext(ctx, s.owner, ms(leaseUntil), ms(now), e.Subscription, e.Key)
	}
	if err != nil {
		return 0, Entry{}, fmt.Errorf("storage: claim %s: %w", e.Key, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, Entry{}, fmt.Errorf("storage: claim %s: %w", e.Key, err)
	}
	return status, prev, nil
}

// heldByOther reports whether a claim in flight belongs to another process
// that may still finish it; see Claim.
func (s *Store) heldByOther(e Entry, now time.Time) bool {
	switch {
	case e.Owner == "" || e.Owner == s.owner:
		return false
	case livenessKnown:
		return ownerAlive(s.path, e.Owner)
	default:
		return e.LeaseUntil.After(now)
	}
}

// ErrClaimLost is returned by Settle when the caller no longer holds the
// claim: its lease ran out and another process took the key over.
var ErrClaimLost = errors.New("claim lost")

// Settle records the outcome of a claim this Store holds. Outcome, Reason,
// Retryable, Channel and MessageTS are taken from e, and for a Sent entry
// Late as well. It returns ErrClaimLost if the claim is no longer this
// Store's.
func (s *Store) Settle(ctx context.Context, e Entry, now time.Time) error {
	res, err := s.stmt.settle.ExecContext(ctx, e.Outcome, e.Reason, e.Retryable, e.Late, e.Channel, e.MessageTS, ms(now), e.Subscription, e.Key, s.owner)
	if err != nil {
		return fmt.Errorf("storage: settle %s: %w", e.Key, err)
	}
	return claimHeld(res, "settle", e.Key)
}

// Renew extends a claim this Store holds to leaseUntil, so that a send
// about to start is covered by its lease from start to end. It returns
// ErrClaimLost if the claim is no longer this Store's.
func (s *Store) Renew(ctx context.Context, e Entry, leaseUntil time.Time) error {
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
func (s *Store) Release(ctx context.Context, e Entry, reason string) error {
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
func (s *Store) Entries(ctx context.Context, subscription string, keys []string) (map[string]Entry, error) {
	out := make(map[string]Entry, len(keys))
	const batch = 500 // stays under SQLite's bound-parameter limit
	for len(keys) > 0 {
		n := min(batch, len(keys))
		args := make([]any, 0, n+1)
		args = append(args, subscription)
		for _, k := range keys[:n] {
			args = append(args, k)
		}
		q := `SELECT ` + entryColumns + ` FROM ledger WHERE subscription = ? AND key IN (?` + strings.Repeat(",?", n-1) + `)`
		if err := s.each(ctx, q, args, func(e Entry) { out[e.Key] = e }); err != nil {
			return nil, fmt.Errorf("storage: entries of %s: %w", subscription, err)
		}
		keys = keys[n:]
	}
	return out, nil
}

// Orphans returns the claims, of every subscription, still in flight that
// no other live process may finish (see Claim): this Store's own, released
// ones, and those of dead owners. The caller skips its own claims that it is
// still working on.
func (s *Store) Orphans(ctx context.Context, now time.Time) ([]Entry, error) {
	var out []Entry
	err := s.each(ctx, `SELECT `+entryColumns+` FROM ledger WHERE outcome = 'sending'`, nil, func(e Entry) {
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
func (s *Store) Range(ctx context.Context, subscription string, from, to time.Time) ([]Entry, error) {
	q := `SELECT ` + entryColumns + ` FROM ledger WHERE trigger_ms >= ? AND trigger_ms < ?`
	args := []any{ms(from), ms(to)}
	if subscription != "" {
		q += ` AND subscription = ?`
		args = append(args, subscription)
	}
	var out []Entry
	if err := s.each(ctx, q+` ORDER BY trigger_ms, subscription, key`, args, func(e Entry) { out = append(out, e) }); err != nil {
		return nil, fmt.Errorf("storage: ledger range: %w", err)
	}
	return out, nil
}

func (s *Store) each(ctx context.Context, q string, args []any, fn func(Entry)) error {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
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
