-- People connect their own accounts (Google, Slack) with OAuth 2.0: the
-- connections with their tokens, sealed by the keyring (the database never
-- holds a token in clear), and the steps of flows being made, so that any
-- process can take the next step. Instants are UTC Unix milliseconds.

-- One connection per person and provider. account is the account
-- connected (a Google email in lower case, a Slack user ID), connected by
-- one person at a time. token is the keyring's sealed grant.
CREATE TABLE connections (
	provider   TEXT    NOT NULL CHECK (provider IN ('google', 'slack')),
	user_id    TEXT    NOT NULL,
	account    TEXT    NOT NULL,
	scopes     TEXT    NOT NULL DEFAULT '', -- space-separated, sorted
	token      BLOB    NOT NULL,
	state      TEXT    NOT NULL CHECK (state IN ('active', 'broken')),
	reason     TEXT    NOT NULL DEFAULT '',
	created_ms INTEGER NOT NULL,
	updated_ms INTEGER NOT NULL,
	PRIMARY KEY (provider, user_id),
	UNIQUE (provider, account)
) STRICT;

-- A step of a flow: a link given in Slack, or a consent page's state. id
-- is the SHA-256 of the secret the browser carries, never the secret; a
-- step is taken (deleted) once.
CREATE TABLE oauth_states (
	id         TEXT    PRIMARY KEY,
	step       TEXT    NOT NULL CHECK (step IN ('link', 'consent')),
	provider   TEXT    NOT NULL,
	user_id    TEXT    NOT NULL,
	binding    TEXT    NOT NULL DEFAULT '',
	verifier   BLOB,
	expires_ms INTEGER NOT NULL
) STRICT;

CREATE INDEX oauth_states_expires ON oauth_states (expires_ms);
