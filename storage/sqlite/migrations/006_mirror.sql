-- Calendar changes pushed, not polled: a mirror of each calendar's
-- upcoming instances, kept by incremental sync, and the push channels open
-- on calendars. Instants are UTC Unix milliseconds, 0 for none.

-- One row per calendar synced: the nextSyncToken, the window the mirror
-- holds (instances starting in (from_ms, horizon_ms]), and when it was
-- last synced in full and at all.
CREATE TABLE calendar_sync (
	calendar   TEXT    PRIMARY KEY,
	token      TEXT    NOT NULL DEFAULT '',
	from_ms    INTEGER NOT NULL,
	horizon_ms INTEGER NOT NULL,
	full_ms    INTEGER NOT NULL,
	synced_ms  INTEGER NOT NULL
) STRICT;

-- The instances of each calendar that are meetings to remind of, by
-- instance ID; meeting is the root package's Meeting as JSON.
CREATE TABLE calendar_instances (
	calendar TEXT    NOT NULL,
	id       TEXT    NOT NULL,
	start_ms INTEGER NOT NULL,
	meeting  TEXT    NOT NULL,
	PRIMARY KEY (calendar, id)
) STRICT;

CREATE INDEX calendar_instances_start ON calendar_instances (calendar, start_ms);

-- Push channels open on calendars' events (events.watch), so that a
-- restart verifies their notifications, renews them or stops them instead
-- of leaking them. token is the channel's secret.
CREATE TABLE push_channels (
	id            TEXT    PRIMARY KEY,
	calendar      TEXT    NOT NULL,
	token         TEXT    NOT NULL,
	resource      TEXT    NOT NULL,
	expiration_ms INTEGER NOT NULL
) STRICT;

CREATE INDEX push_channels_calendar ON push_channels (calendar);
