-- Calendar changes pushed, not polled: a mirror of each calendar's
-- upcoming instances, kept by incremental sync, and the push channels open
-- on calendars. As SQLite's 006.

-- One row per calendar synced: the nextSyncToken, the window the mirror
-- holds (instances starting in (from_at, horizon]), and when it was last
-- synced in full and at all.
CREATE TABLE calendar_sync (
	calendar  text        PRIMARY KEY,
	token     text        NOT NULL DEFAULT '',
	from_at   timestamptz,
	horizon   timestamptz,
	full_at   timestamptz,
	synced_at timestamptz
);

-- The instances of each calendar that are meetings to remind of, by
-- instance ID; meeting is the root package's Meeting as JSON.
CREATE TABLE calendar_instances (
	calendar text        NOT NULL,
	id       text        NOT NULL,
	start_at timestamptz NOT NULL,
	meeting  jsonb       NOT NULL,
	PRIMARY KEY (calendar, id)
);

CREATE INDEX calendar_instances_start ON calendar_instances (calendar, start_at);

-- Push channels open on calendars' events (events.watch), so that a
-- restart verifies their notifications, renews them or stops them instead
-- of leaking them. token is the channel's secret.
CREATE TABLE push_channels (
	id         text        PRIMARY KEY,
	calendar   text        NOT NULL,
	token      text        NOT NULL,
	resource   text        NOT NULL,
	expiration timestamptz
);

CREATE INDEX push_channels_calendar ON push_channels (calendar);
