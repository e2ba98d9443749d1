-- Self-service from Slack: subscriptions people make with /meetingbot, the
-- recurring series they muted, and their settings.

-- A subscription made from Slack: "personal" (/meetingbot on: the caller's
-- own calendar, DMed to them) or "channel" (/meetingbot subscribe: any
-- calendar, posted in a channel). The id is derived from (calendar,
-- destination) and never changes, so the ledger keys and the cursor scoped
-- by it are found again when the same subscription is turned off and on.
CREATE TABLE slack_subscriptions (
	id          TEXT    PRIMARY KEY,
	kind        TEXT    NOT NULL CHECK (kind IN ('personal', 'channel')),
	calendar    TEXT    NOT NULL,
	destination TEXT    NOT NULL, -- a Slack user ID (personal) or channel ID
	offsets     TEXT    NOT NULL, -- whole seconds, ascending, comma-separated: '60,600'
	created_by  TEXT    NOT NULL, -- the Slack user ID who made it
	created_ms  INTEGER NOT NULL,
	UNIQUE (calendar, destination)
) STRICT;

CREATE INDEX slack_subscriptions_destination ON slack_subscriptions (destination);

-- Recurring series muted for one subscription. Not tied to the row above by
-- a foreign key: a mute outlives turning the subscription off and on.
CREATE TABLE slack_muted_series (
	subscription TEXT    NOT NULL,
	series       TEXT    NOT NULL, -- the recurring event's ID
	title        TEXT    NOT NULL DEFAULT '',
	muted_by     TEXT    NOT NULL,
	muted_ms     INTEGER NOT NULL,
	PRIMARY KEY (subscription, series)
) STRICT;

-- Per-user settings. offsets are kept while reminders are off, so that "on"
-- brings back the user's choice; '' means the bot's default.
CREATE TABLE slack_settings (
	user_id    TEXT    PRIMARY KEY,
	offsets    TEXT    NOT NULL DEFAULT '',
	agenda     TEXT    NOT NULL DEFAULT '', -- 'HH:MM' in tz, '' for none
	tz         TEXT    NOT NULL DEFAULT '', -- Slack's IANA zone, cached for the agenda
	updated_ms INTEGER NOT NULL
) STRICT;
