package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/meetingbot/meetingbot"
)

// A reminder follows its meeting: a sent reminder's message is edited when
// its meeting moves or is cancelled, as in the SQLite store (see its
// follow.go). An edit is claimed like a send: its claim is another
// replica's while that replica's heartbeat is fresh or the claim's lease
// runs.

// Followed returns the sent entries of subscription whose meeting, as
// their message names it now, starts after now: the new start of a message
// edited to say the meeting moved, or else the start they were sent for. A
// sweep compares them with the calendar.
func (s *Store) Followed(ctx context.Context, subscription string, now time.Time) ([]meetingbot.Entry, error) {
	var out []meetingbot.Entry
	err := s.each(ctx, `SELECT `+entryColumns+` FROM ledger l
			WHERE l.subscription = $1 AND l.outcome = 'sent' AND l.start_at > $2 AND l.edit_to IS NULL
		UNION ALL
		SELECT `+entryColumns+` FROM ledger l
			WHERE l.subscription = $1 AND l.outcome = 'sent' AND l.edit_to > $2
		ORDER BY start_at, key`,
		[]any{subscription, ts(now)}, func(e meetingbot.Entry) { out = append(out, e) })
	if err != nil {
		return nil, fmt.Errorf("postgres: followed reminders of %s: %w", subscription, err)
	}
	return out, nil
}

// ClaimEdit takes the edit of the message of e's sent entry for this Store
// for leaseUntil - now, written and judged on the database's clock as
// Claim's leases are, and returns the entry as it is now (its edit lease
// told on the caller's clock, leaseUntil). It returns Claimed
// (the caller edits, then calls RecordEdit), Busy (another live replica is
// editing it) or Done (nothing to edit: the entry is not a sent one, or
// editing its message was given up for good).
func (s *Store) ClaimEdit(ctx context.Context, e meetingbot.Entry, now, leaseUntil time.Time) (meetingbot.ClaimStatus, meetingbot.Entry, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	status := meetingbot.Claimed
	var cur row
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		cur, err = scanRow(tx.QueryRow(ctx, `SELECT `+entryColumns+`, `+ownerColumns+` FROM ledger l
			LEFT JOIN replicas r ON r.owner = l.edit_owner
			WHERE l.subscription = $2 AND l.key = $3 FOR UPDATE OF l`, s.now(), e.Subscription, e.Key))
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			status = meetingbot.Done
			return nil
		case err != nil:
			return err
		case cur.Outcome != meetingbot.Sent || cur.Edit.Code == meetingbot.ReasonPermanent:
			status = meetingbot.Done
			return nil
		case s.editHeldByOther(cur):
			status = meetingbot.Busy
			return nil
		}
		_, err = tx.Exec(ctx, `UPDATE ledger SET edit_owner = $2, edit_lease_until = `+dbNowMS+` + $3::bigint * interval '1 millisecond'
			WHERE subscription = $4 AND key = $5`, s.now(), s.owner, leaseUntil.Sub(now).Milliseconds(), e.Subscription, e.Key)
		return err
	})
	if err != nil {
		return 0, meetingbot.Entry{}, fmt.Errorf("postgres: claim edit of %s: %w", e.Key, s.lost(err))
	}
	if status == meetingbot.Claimed {
		cur.Edit.Owner, cur.Edit.LeaseUntil = s.owner, leaseUntil.UTC().Truncate(time.Millisecond)
	}
	return status, cur.Entry, nil
}

// editHeldByOther reports whether an edit in flight belongs to another
// replica that may still finish it; see heldByOther.
func (s *Store) editHeldByOther(r row) bool {
	switch {
	case r.Edit.Owner == "" || r.Edit.Owner == s.owner:
		return false
	case !r.registered:
		return false
	default:
		return r.alive || r.editLeaseRuns
	}
}

// RecordEdit ends a claim on an edit this Store holds, writing e.Edit's
// Kind, MovedTo, Count, At, Code and Reason: what the message says now, or
// why the edit failed. It returns meetingbot.ErrClaimLost if the claim is
// no longer this Store's.
func (s *Store) RecordEdit(ctx context.Context, e meetingbot.Entry) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	tag, err := s.exec(ctx, `UPDATE ledger SET edit = $1, edit_to = $2, edits = $3, edited_at = $4,
			edit_code = $5, edit_reason = $6, edit_owner = '', edit_lease_until = NULL
		WHERE subscription = $7 AND key = $8 AND edit_owner = $9`,
		string(e.Edit.Kind), ts(e.Edit.MovedTo), e.Edit.Count, ts(e.Edit.At), string(e.Edit.Code), e.Edit.Reason,
		e.Subscription, e.Key, s.owner)
	return claimHeld(tag, err, "record edit of", e.Key)
}
