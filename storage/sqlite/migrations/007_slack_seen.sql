-- What the bot took from Slack, so that it takes nothing twice, on any
-- replica and across a restart: the signatures of requests verified
-- ("sig:" and the MAC in hex; a captured request replayed within its 5
-- minutes is refused) and the Events API event IDs handled ("event:" and
-- the ID; Slack's retries of one are not handled again). Each key is kept
-- until expires_ms (UTC Unix milliseconds), then forgotten.
CREATE TABLE slack_seen (
	key        TEXT    PRIMARY KEY,
	expires_ms INTEGER NOT NULL
) STRICT;

CREATE INDEX slack_seen_expires ON slack_seen (expires_ms);
