-- Instances mirrored before this migration name no recurring event
-- (Meeting.RecurringEventID), which the mirror needs to read a changed
-- series again: every calendar's next sync is a full one, which writes its
-- instances anew.
UPDATE calendar_sync SET token = '';

-- The workspace's channels by name, as conversations.list last listed
-- them, so that a #name destination survives a restart, and reaches every
-- replica, without listing a large workspace again (conversations.list is
-- in Slack's Tier 2, some 20 pages a minute). seen_ms is when a listing
-- last found the name (UTC Unix milliseconds); a listing that ends drops
-- the names it did not find.
CREATE TABLE slack_channel_names (
	name    TEXT    PRIMARY KEY,
	id      TEXT    NOT NULL,
	seen_ms INTEGER NOT NULL
) STRICT;
