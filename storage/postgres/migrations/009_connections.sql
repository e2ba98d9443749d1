-- People connect their own accounts (Google, Slack) with OAuth 2.0: the
-- connections with their sealed tokens and the steps of flows being made.
-- As SQLite's 009.

CREATE TABLE connections (
	provider   text        NOT NULL CHECK (provider IN ('google', 'slack')),
	user_id    text        NOT NULL,
	account    text        NOT NULL,
	scopes     text        NOT NULL DEFAULT '',
	token      bytea       NOT NULL,
	state      text        NOT NULL CHECK (state IN ('active', 'broken')),
	reason     text        NOT NULL DEFAULT '',
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL,
	PRIMARY KEY (provider, user_id),
	UNIQUE (provider, account)
);

CREATE TABLE oauth_states (
	id         text        PRIMARY KEY,
	step       text        NOT NULL CHECK (step IN ('link', 'consent')),
	provider   text        NOT NULL,
	user_id    text        NOT NULL,
	binding    text        NOT NULL DEFAULT '',
	verifier   bytea,
	expires_at timestamptz NOT NULL
);

CREATE INDEX oauth_states_expires ON oauth_states (expires_at);
