package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/meetingbot/meetingbot"
)

// A reminder follows its meeting: a sent reminder's message is edited when
// its meeting moves or is cancelled. Edits are claimed like sends, so that
// two processes never edit one message at once, and recorded, so that a
// restart does not edit again. An edit sets a message's whole content, so
// one repeated after a crash (between Slack's answer and the record) shows
// nothing twice: there is no "look first" state as for sends.

// followedQuery lists the sent entries of one subscription whose meeting,
// as their message names it, starts after an instant: the new start a
// "moved" message names (edit_to_ms), or else the start they were sent
// for. Each half reads one partial index of migration 004.
const followedQuery = `SELECT ` + entryColumns + ` FROM ledger
	WHERE subscription = ? AND outcome = 'sent' AND start_ms > ? AND edit_to_ms = 0
	UNION
	SELECT ` + entryColumns + ` FROM ledger
	WHERE subscription = ? AND outcome = 'sent' AND edit_to_ms > 0 AND edit_to_ms > ?
	ORDER BY start_ms, key`

// Followed returns the sent entries of subscription whose meeting, as
// their message names it now, starts after now: the new start of a message
// edited to say the meeting moved, or else the start they were sent for. A
// sweep compares them with the calendar.
func (s *Store) Followed(ctx context.Context, subscription string, now time.Time) ([]meetingbot.Entry, error) {
	rows, err := s.stmt.followed.QueryContext(ctx, subscription, ms(now), subscription, ms(now))
	if err != nil {
		return nil, fmt.Errorf("storage: followed reminders of %s: %w", subscription, err)
	}
	defer rows.Close()
	var out []meetingbot.Entry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, fmt.Errorf("storage: followed reminders of %s: %w", subscription, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: followed reminders of %s: %w", subscription, err)
	}
	return out, nil
}

// ClaimEdit takes the edit of the message of e's sent entry (e.Subscription,
// e.Key) for this Store until leaseUntil, and returns the entry as it is
// now, which the caller compares with what it means to write: another
// process may have edited it since the caller read it. It returns Claimed
// (the caller edits, then calls RecordEdit), Busy (another live process is
// editing it, see Claim) or Done (nothing to edit: the entry is not a sent
// one, or editing its message was given up for good).
func (s *Store) ClaimEdit(ctx context.Context, e meetingbot.Entry, now, leaseUntil time.Time) (meetingbot.ClaimStatus, meetingbot.Entry, error) {
	s.write.Lock()
	defer s.write.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, meetingbot.Entry{}, fmt.Errorf("storage: claim edit of %s: %w", e.Key, err)
	}
	defer tx.Rollback()
	cur, err := scanEntry(tx.StmtContext(ctx, s.stmt.claimSelect).QueryRowContext(ctx, e.Subscription, e.Key))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return meetingbot.Done, meetingbot.Entry{}, nil
	case err != nil:
		return 0, meetingbot.Entry{}, fmt.Errorf("storage: claim edit of %s: %w", e.Key, err)
	case cur.Outcome != meetingbot.Sent || cur.Edit.Code == meetingbot.ReasonPermanent:
		return meetingbot.Done, cur, nil
	case s.otherLive(cur.Edit.Owner, cur.Edit.LeaseUntil, now):
		return meetingbot.Busy, cur, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE ledger SET edit_owner = ?, edit_lease_ms = ? WHERE subscription = ? AND key = ?`,
		s.owner, ms(leaseUntil), e.Subscription, e.Key); err != nil {
		return 0, meetingbot.Entry{}, fmt.Errorf("storage: claim edit of %s: %w", e.Key, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, meetingbot.Entry{}, fmt.Errorf("storage: claim edit of %s: %w", e.Key, err)
	}
	cur.Edit.Owner, cur.Edit.LeaseUntil = s.owner, leaseUntil
	return meetingbot.Claimed, cur, nil
}

// RecordEdit ends a claim on an edit this Store holds, writing e.Edit's
// Kind, MovedTo, Count, At, Code and Reason: what the message says now,
// or why the edit failed. It returns ErrClaimLost if the claim is no
// longer this Store's.
func (s *Store) RecordEdit(ctx context.Context, e meetingbot.Entry) error {
	s.write.Lock()
	defer s.write.Unlock()
	res, err := s.db.ExecContext(ctx, `UPDATE ledger SET edit = ?, edit_to_ms = ?, edits = ?, edited_ms = ?,
		edit_code = ?, edit_reason = ?, edit_owner = '', edit_lease_ms = 0
		WHERE subscription = ? AND key = ? AND edit_owner = ?`,
		e.Edit.Kind, ms(e.Edit.MovedTo), e.Edit.Count, ms(e.Edit.At), e.Edit.Code, e.Edit.Reason,
		e.Subscription, e.Key, s.owner)
	if err != nil {
		return fmt.Errorf("storage: record edit of %s: %w", e.Key, err)
	}
	return claimHeld(res, "record edit of", e.Key)
}
