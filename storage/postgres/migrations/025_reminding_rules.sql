-- People choose how they are reminded: at their calendar's own popup
-- reminders (on_calendar, "/meetingbot on calendar") besides or instead of
-- fixed offsets, and rules that skip meetings (rules: JSON of
-- meetingbot.Rules, '' for none). A subscription made from Slack holds
-- both; a person's settings keep them while their reminders are off. A
-- subscription with on_calendar may have no fixed offsets: the store
-- checks that one of the two is there, so the check on offsets alone goes.
ALTER TABLE slack_subscriptions ADD COLUMN on_calendar boolean NOT NULL DEFAULT false;
ALTER TABLE slack_subscriptions ADD COLUMN rules text NOT NULL DEFAULT '';
ALTER TABLE slack_subscriptions DROP CONSTRAINT IF EXISTS slack_subscriptions_offsets_check;
ALTER TABLE slack_settings ADD COLUMN on_calendar boolean NOT NULL DEFAULT false;
ALTER TABLE slack_settings ADD COLUMN rules text NOT NULL DEFAULT '';

-- Instances mirrored before this migration carry none of what the rules
-- and the card read (their popup reminders, attendees, rooms, dial-in,
-- attachments, description excerpt): every calendar's next sync is a full
-- one, which writes its instances anew.
UPDATE calendar_sync SET token = '';
