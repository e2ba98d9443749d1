-- People answer invitations from Slack.
--
-- A reminder's message may say "You declined" (edit = 'declined') when its
-- calendar's owner declines the meeting, where it said "Cancelled" before.
-- SQLite cannot change a column's CHECK, so the ledger is rebuilt with the
-- new one, as SQLite documents for schema changes ALTER TABLE cannot make
-- ("Making Other Kinds Of Table Schema Changes": create the new table,
-- copy, drop the old, rename, recreate the indexes), in the migration's
-- transaction.
CREATE TABLE ledger_new (
	subscription   TEXT    NOT NULL,
	key            TEXT    NOT NULL,
	event_id       TEXT    NOT NULL,
	offset_ms      INTEGER NOT NULL,
	start_ms       INTEGER NOT NULL,
	trigger_ms     INTEGER NOT NULL,
	outcome        TEXT    NOT NULL CHECK (outcome IN ('sending', 'sent', 'skipped', 'failed')),
	reason         TEXT    NOT NULL DEFAULT '',
	retryable      INTEGER NOT NULL DEFAULT 0,
	late           INTEGER NOT NULL DEFAULT 0,
	attempts       INTEGER NOT NULL DEFAULT 0,
	channel        TEXT    NOT NULL DEFAULT '',
	message_ts     TEXT    NOT NULL DEFAULT '',
	owner          TEXT    NOT NULL DEFAULT '',
	lease_until_ms INTEGER NOT NULL DEFAULT 0,
	claimed_ms     INTEGER NOT NULL DEFAULT 0,
	settled_ms     INTEGER NOT NULL DEFAULT 0,
	code           TEXT    NOT NULL DEFAULT '',
	edit           TEXT    NOT NULL DEFAULT ''
		CHECK (edit IN ('', 'moved', 'cancelled', 'declined', 'restored')),
	edit_to_ms     INTEGER NOT NULL DEFAULT 0,
	edits          INTEGER NOT NULL DEFAULT 0,
	edited_ms      INTEGER NOT NULL DEFAULT 0,
	edit_code      TEXT    NOT NULL DEFAULT '',
	edit_reason    TEXT    NOT NULL DEFAULT '',
	edit_owner     TEXT    NOT NULL DEFAULT '',
	edit_lease_ms  INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (subscription, key)
) STRICT;

INSERT INTO ledger_new (subscription, key, event_id, offset_ms, start_ms, trigger_ms, outcome, reason, retryable, late,
		attempts, channel, message_ts, owner, lease_until_ms, claimed_ms, settled_ms, code,
		edit, edit_to_ms, edits, edited_ms, edit_code, edit_reason, edit_owner, edit_lease_ms)
	SELECT subscription, key, event_id, offset_ms, start_ms, trigger_ms, outcome, reason, retryable, late,
		attempts, channel, message_ts, owner, lease_until_ms, claimed_ms, settled_ms, code,
		edit, edit_to_ms, edits, edited_ms, edit_code, edit_reason, edit_owner, edit_lease_ms
	FROM ledger;
DROP TABLE ledger;
ALTER TABLE ledger_new RENAME TO ledger;
CREATE INDEX ledger_trigger ON ledger (trigger_ms);
CREATE INDEX ledger_sending ON ledger (subscription, outcome) WHERE outcome = 'sending';
CREATE INDEX ledger_sent_start ON ledger (subscription, start_ms) WHERE outcome = 'sent';
CREATE INDEX ledger_moved_to ON ledger (subscription, edit_to_ms) WHERE edit_to_ms > 0;

-- Who gets a DM of each new invitation (/meetingbot invites on), off by
-- default. since_ms is when they were last turned on: an invitation on
-- the calendar before then (last changed before) gets none. Instants are
-- UTC Unix milliseconds. The notices themselves are ledger entries
-- (invite:<user>:<eventId> under invite:<user>).
CREATE TABLE invite_settings (
	user_id    TEXT    PRIMARY KEY,
	enabled    INTEGER NOT NULL CHECK (enabled IN (0, 1)),
	since_ms   INTEGER NOT NULL,
	updated_ms INTEGER NOT NULL
) STRICT;
