-- A channel subscription may follow its calendar's changes and post its
-- agendas (meetingbot.Following): changes_ms is when it began to hear of
-- the changes (0: it does not), daily 'HH:MM' and weekly 'mon 09:00' the
-- agendas' times in zone (the subscriber's Slack zone; '' for none). A
-- subscription that follows something may have no offsets ('').
ALTER TABLE slack_subscriptions ADD COLUMN changes_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE slack_subscriptions ADD COLUMN daily TEXT NOT NULL DEFAULT '';
ALTER TABLE slack_subscriptions ADD COLUMN weekly TEXT NOT NULL DEFAULT '';
ALTER TABLE slack_subscriptions ADD COLUMN zone TEXT NOT NULL DEFAULT '';
