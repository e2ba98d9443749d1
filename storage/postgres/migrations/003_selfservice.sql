-- Self-service from Slack: subscriptions people make with /meetingbot, the
-- recurring series they muted, and their settings. Every replica reads
-- them on its next sweep.

-- A subscription made from Slack: "personal" (/meetingbot on: the caller's
-- own calendar, DMed to them) or "channel" (/meetingbot subscribe: any
-- calendar, posted in a channel). The id is derived from (calendar,
-- destination) and never changes, so the ledger keys and the cursor scoped
-- by it are found again when the same subscription is turned off and on.
CREATE TABLE slack_subscriptions (
	id          text COLLATE "C" PRIMARY KEY,
	kind        text        NOT NULL CHECK (kind IN ('personal', 'channel')),
	calendar    text        NOT NULL,
	destination text        NOT NULL, -- a Slack user ID (personal) or channel ID
	offsets     integer[]   NOT NULL CHECK (cardinality(offsets) > 0), -- whole seconds, ascending
	created_by  text        NOT NULL, -- the Slack user ID who made it
	created_at  timestamptz NOT NULL,
	UNIQUE (calendar, destination)
);

CREATE INDEX slack_subscriptions_destination ON slack_subscriptions (destination);

-- Recurring series muted for one subscription. Not tied to the row above by
-- a foreign key: a mute outlives turning the subscription off and on.
CREATE TABLE slack_muted_series (
	subscription text COLLATE "C" NOT NULL,
	series       text COLLATE "C" NOT NULL, -- the recurring event's ID
	title        text        NOT NULL DEFAULT '',
	muted_by     text        NOT NULL,
	muted_at     timestamptz NOT NULL,
	PRIMARY KEY (subscription, series)
);

-- Per-user settings. offsets are kept while reminders are off, so that "on"
-- brings back the user's choice; NULL means the bot's default.
CREATE TABLE slack_settings (
	user_id    text COLLATE "C" PRIMARY KEY,
	offsets    integer[],
	agenda     text        NOT NULL DEFAULT '', -- 'HH:MM' in tz, '' for none
	tz         text        NOT NULL DEFAULT '', -- Slack's IANA zone, cached for the agenda
	updated_at timestamptz NOT NULL
);
