-- Cursors: per subscription, the instant up to which the sweep is complete.
CREATE TABLE cursors (
	subscription TEXT PRIMARY KEY,
	at_ms        INTEGER NOT NULL
) STRICT;

-- The ledger: one row per trigger key, scoped by subscription.
-- Instants are UTC Unix milliseconds.
CREATE TABLE ledger (
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
	PRIMARY KEY (subscription, key)
) STRICT;

CREATE INDEX ledger_trigger ON ledger (trigger_ms);
CREATE INDEX ledger_sending ON ledger (subscription, outcome) WHERE outcome = 'sending';
