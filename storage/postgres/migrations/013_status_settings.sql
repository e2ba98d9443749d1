-- How each person wants their Slack status during meetings. As SQLite's 013.
CREATE TABLE status_settings (
	user_id    text        PRIMARY KEY,
	titles     boolean     NOT NULL DEFAULT false,
	updated_at timestamptz NOT NULL
);
