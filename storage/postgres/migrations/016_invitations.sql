-- People answer invitations from Slack: a reminder's message may say "You
-- declined" (edit = 'declined'), and people choose whether each new
-- invitation gets a DM. As SQLite's 016, where PostgreSQL changes the
-- CHECK in place (the constraint ADD COLUMN named ledger_edit_check).
ALTER TABLE ledger DROP CONSTRAINT ledger_edit_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_edit_check
	CHECK (edit IN ('', 'moved', 'cancelled', 'declined', 'restored'));

CREATE TABLE invite_settings (
	user_id    text        PRIMARY KEY,
	enabled    boolean     NOT NULL,
	since      timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);
