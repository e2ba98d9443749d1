-- Out of office in a person's Slack status: out_of_office, chosen with
-- "/meetingbot status ooo on", shows "Out of office" during their
-- out-of-office events. The mirror holds those events from now on (for
-- the status subscriptions that ask for them, never for reminders), and
-- the instances mirrored before this migration left them out: every
-- calendar's next sync is a full one.
ALTER TABLE status_settings ADD COLUMN out_of_office INTEGER NOT NULL DEFAULT 0 CHECK (out_of_office IN (0, 1));

UPDATE calendar_sync SET token = '';
