-- People answer invitations from Slack: a flow's steps keep the scopes the
-- link asks for beyond the read-only ones (incremental authorization,
-- space-separated), so that only those who answer from Slack grant write
-- access; and instances mirrored before this migration do not say their
-- calendar owner's answer (Meeting.Response), which the answer buttons
-- show: every calendar's next sync is a full one, which writes its
-- instances anew.
ALTER TABLE oauth_states ADD COLUMN scopes TEXT NOT NULL DEFAULT '';

UPDATE calendar_sync SET token = '';
