-- Durable timers: the waits people create in the bot ("remind me at the
-- start"), whose stored row is the truth, unlike reminders, which are
-- read from the calendar. One row per timer key; instants are UTC Unix
-- milliseconds, 0 for none.
CREATE TABLE timers (
	key            TEXT    PRIMARY KEY,
	grp            TEXT    NOT NULL DEFAULT '', -- at most one pending timer per group
	kind           TEXT    NOT NULL,
	subject        TEXT    NOT NULL DEFAULT '', -- whom it is for: a Slack user ID
	fire_ms        INTEGER NOT NULL,            -- its instant
	due_ms         INTEGER NOT NULL,            -- when it is next tried
	until_ms       INTEGER NOT NULL DEFAULT 0,  -- not fired after this
	payload        TEXT    NOT NULL DEFAULT '{}',
	state          TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'moved', 'cancelled')),
	code           TEXT    NOT NULL DEFAULT '',
	reason         TEXT    NOT NULL DEFAULT '',
	next_key       TEXT    NOT NULL DEFAULT '', -- the key it moved to
	holder         TEXT    NOT NULL DEFAULT '', -- the process firing it
	lease_until_ms INTEGER NOT NULL DEFAULT 0,
	attempts       INTEGER NOT NULL DEFAULT 0,
	created_ms     INTEGER NOT NULL,
	done_ms        INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE INDEX timers_pending ON timers (due_ms) WHERE state = 'pending';
CREATE UNIQUE INDEX timers_pending_group ON timers (grp) WHERE state = 'pending' AND grp <> '';
CREATE INDEX timers_subject ON timers (subject) WHERE state = 'pending';
CREATE INDEX timers_fire ON timers (fire_ms);
