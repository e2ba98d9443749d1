-- Durable timers: the waits people create in the bot ("remind me at the
-- start"), whose stored row is the truth, unlike reminders, which are
-- read from the calendar. One row per timer key. lease_until is an
-- instant of the database's clock, written and judged with now().
CREATE TABLE timers (
	key         text COLLATE "C" PRIMARY KEY,
	grp         text COLLATE "C" NOT NULL DEFAULT '', -- at most one pending timer per group
	kind        text        NOT NULL,
	subject     text COLLATE "C" NOT NULL DEFAULT '', -- whom it is for: a Slack user ID
	fire_at     timestamptz NOT NULL,                 -- its instant
	due_at      timestamptz NOT NULL,                 -- when it is next tried
	until_at    timestamptz,                          -- not fired after this
	payload     text        NOT NULL DEFAULT '{}',
	state       text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'moved', 'cancelled')),
	code        text        NOT NULL DEFAULT '',
	reason      text        NOT NULL DEFAULT '',
	next_key    text COLLATE "C" NOT NULL DEFAULT '', -- the key it moved to
	holder      text COLLATE "C" NOT NULL DEFAULT '', -- the replica firing it
	lease_until timestamptz,
	attempts    integer     NOT NULL DEFAULT 0,
	created_at  timestamptz NOT NULL,
	done_at     timestamptz
);

CREATE INDEX timers_pending ON timers (due_at) WHERE state = 'pending';
CREATE UNIQUE INDEX timers_pending_group ON timers (grp) WHERE state = 'pending' AND grp <> '';
CREATE INDEX timers_subject ON timers (subject) WHERE state = 'pending';
CREATE INDEX timers_fire ON timers (fire_at);
