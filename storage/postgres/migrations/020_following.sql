-- A channel subscription may follow its calendar's changes and post its
-- agendas (meetingbot.Following): changes_at is when it began to hear of
-- the changes (NULL: it does not), daily 'HH:MM' and weekly 'mon 09:00'
-- the agendas' times in zone (the subscriber's Slack zone; '' for none).
-- A subscription that follows something may have no offsets.
ALTER TABLE slack_subscriptions ADD COLUMN changes_at timestamptz;
ALTER TABLE slack_subscriptions ADD COLUMN daily text NOT NULL DEFAULT '';
ALTER TABLE slack_subscriptions ADD COLUMN weekly text NOT NULL DEFAULT '';
ALTER TABLE slack_subscriptions ADD COLUMN zone text NOT NULL DEFAULT '';
ALTER TABLE slack_subscriptions DROP CONSTRAINT slack_subscriptions_offsets_check;
ALTER TABLE slack_subscriptions ADD CONSTRAINT slack_subscriptions_offsets_check
	CHECK (cardinality(offsets) > 0 OR changes_at IS NOT NULL OR daily <> '' OR weekly <> '');
