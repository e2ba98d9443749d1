-- How each person wants their Slack status during meetings (people who
-- connected their Slack user): titles shows the meeting's title instead of
-- "In a meeting", never for a private event.
CREATE TABLE status_settings (
	user_id    TEXT    PRIMARY KEY,
	titles     INTEGER NOT NULL DEFAULT 0 CHECK (titles IN (0, 1)),
	updated_ms INTEGER NOT NULL
) STRICT;
