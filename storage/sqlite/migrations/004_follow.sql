-- A reminder follows its meeting: for each sent reminder, what its message
-- says of its meeting now, after edits when the meeting moved or was
-- cancelled, and the claim on an edit in flight. Instants are UTC Unix
-- milliseconds, 0 for none.
ALTER TABLE ledger ADD COLUMN edit TEXT NOT NULL DEFAULT ''
	CHECK (edit IN ('', 'moved', 'cancelled', 'restored'));
ALTER TABLE ledger ADD COLUMN edit_to_ms    INTEGER NOT NULL DEFAULT 0; -- the new start, when moved
ALTER TABLE ledger ADD COLUMN edits         INTEGER NOT NULL DEFAULT 0; -- edits recorded
ALTER TABLE ledger ADD COLUMN edited_ms     INTEGER NOT NULL DEFAULT 0; -- when the last was
ALTER TABLE ledger ADD COLUMN edit_code     TEXT    NOT NULL DEFAULT ''; -- 'permanent': given up; 'transient': retried
ALTER TABLE ledger ADD COLUMN edit_reason   TEXT    NOT NULL DEFAULT '';
ALTER TABLE ledger ADD COLUMN edit_owner    TEXT    NOT NULL DEFAULT ''; -- the claim on an edit in flight
ALTER TABLE ledger ADD COLUMN edit_lease_ms INTEGER NOT NULL DEFAULT 0;

-- Each sweep lists the sent reminders of one subscription whose meeting,
-- as their message names it, has not started: by the start they were sent
-- for, or by the start a "moved" message names.
CREATE INDEX ledger_sent_start ON ledger (subscription, start_ms) WHERE outcome = 'sent';
CREATE INDEX ledger_moved_to ON ledger (subscription, edit_to_ms) WHERE edit_to_ms > 0;
