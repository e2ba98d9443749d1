-- What the bot took from Slack, so that it takes nothing twice, on any
-- replica and across a restart: the signatures of requests verified
-- ("sig:" and the MAC in hex) and the Events API event IDs handled
-- ("event:" and the ID). As SQLite's 007.
CREATE TABLE slack_seen (
	key     text        PRIMARY KEY,
	expires timestamptz NOT NULL
);

CREATE INDEX slack_seen_expires ON slack_seen (expires);
