-- A reminder follows its meeting: for each sent reminder, what its message
-- says of its meeting now, after edits when the meeting moved or was
-- cancelled, and the claim on an edit in flight. As SQLite's 004.
ALTER TABLE ledger ADD COLUMN edit text NOT NULL DEFAULT ''
	CHECK (edit IN ('', 'moved', 'cancelled', 'restored'));
ALTER TABLE ledger ADD COLUMN edit_to          timestamptz;           -- the new start, when moved
ALTER TABLE ledger ADD COLUMN edits            integer NOT NULL DEFAULT 0;
ALTER TABLE ledger ADD COLUMN edited_at        timestamptz;
ALTER TABLE ledger ADD COLUMN edit_code        text NOT NULL DEFAULT ''; -- 'permanent': given up; 'transient': retried
ALTER TABLE ledger ADD COLUMN edit_reason      text NOT NULL DEFAULT '';
ALTER TABLE ledger ADD COLUMN edit_owner       text NOT NULL DEFAULT ''; -- the claim on an edit in flight
ALTER TABLE ledger ADD COLUMN edit_lease_until timestamptz;

-- Each sweep lists the sent reminders of one subscription whose meeting,
-- as their message names it, has not started.
CREATE INDEX ledger_sent_start ON ledger (subscription, start_at) WHERE outcome = 'sent';
CREATE INDEX ledger_moved_to ON ledger (subscription, edit_to) WHERE edit_to IS NOT NULL;
