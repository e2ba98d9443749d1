-- People answer invitations from Slack: the scopes a flow's link asks for
-- beyond the read-only ones, and a full sync of every calendar, so that
-- mirrored instances say their owner's answer. As SQLite's 015.
ALTER TABLE oauth_states ADD COLUMN scopes text NOT NULL DEFAULT '';

UPDATE calendar_sync SET token = '';
