-- People choose how they are reminded: at their calendar's own popup
-- reminders (on_calendar, "/meetingbot on calendar") besides or instead of
-- fixed offsets, and rules that skip meetings (rules: JSON of
-- meetingbot.Rules, '' for none). A subscription made from Slack holds
-- both; a person's settings keep them while their reminders are off. A
-- subscription with on_calendar may have no fixed offsets ('').
ALTER TABLE slack_subscriptions ADD COLUMN on_calendar INTEGER NOT NULL DEFAULT 0;
ALTER TABLE slack_subscriptions ADD COLUMN rules TEXT NOT NULL DEFAULT '';
ALTER TABLE slack_settings ADD COLUMN on_calendar INTEGER NOT NULL DEFAULT 0;
ALTER TABLE slack_settings ADD COLUMN rules TEXT NOT NULL DEFAULT '';

-- Instances mirrored before this migration carry none of what the rules
-- and the card read (their popup reminders, attendees, rooms, dial-in,
-- attachments, description excerpt): every calendar's next sync is a full
-- one, which writes its instances anew.
UPDATE calendar_sync SET token = '';
