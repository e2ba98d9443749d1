-- Out of office in a person's Slack status, and a full sync of every
-- calendar so that the mirror holds out-of-office events. As SQLite's 017.
ALTER TABLE status_settings ADD COLUMN out_of_office boolean NOT NULL DEFAULT false;

UPDATE calendar_sync SET token = '';
