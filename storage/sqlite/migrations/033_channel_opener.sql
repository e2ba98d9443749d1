-- Each push channel remembers the identity that opened it, the only one
-- Google lets stop it ("Channel … not found for project" to any other):
-- '' for the bot's own credentials, else the reading
-- ("<calendar> as <Slack user>") of the person whose connected account
-- opened it. Channels opened before were opened with a person's token when
-- the calendar's account had a connection in use, as now recorded.
ALTER TABLE push_channels ADD COLUMN opener TEXT NOT NULL DEFAULT '';
UPDATE push_channels SET opener = push_channels.calendar || ' as ' || (
	SELECT c.user_id FROM connections c
	WHERE c.provider = 'google' AND c.state = 'active' AND c.account = lower(push_channels.calendar))
WHERE EXISTS (
	SELECT 1 FROM connections c
	WHERE c.provider = 'google' AND c.state = 'active' AND c.account = lower(push_channels.calendar));
