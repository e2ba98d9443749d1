-- What each channel that follows its calendar's changes was last told of
-- each upcoming event (package feed): the event as a JSON meetingbot
-- Meeting, by the notices' pseudo-subscription (feed:<subscription>). A
-- change is a difference from it; the ledger keeps each notice once.
CREATE TABLE feed_seen (
	subscription TEXT    NOT NULL,
	event        TEXT    NOT NULL,
	meeting      TEXT    NOT NULL,
	PRIMARY KEY (subscription, event)
) STRICT;

-- When each channel's first reading of its calendar was taken: nothing
-- on the calendar then is announced (the agenda's job), and an event
-- that only now comes within the window read is not "added".
CREATE TABLE feed_primed (
	subscription TEXT    PRIMARY KEY,
	primed_ms    INTEGER NOT NULL
) STRICT;

-- A notice being posted, per event: the state it tells, under its ledger
-- key, kept until its outcome is known. A post whose answer was lost, or a
-- process killed after Slack stored it, may have told the channel that
-- state: the next pass asks the ledger (and Slack) before it compares.
CREATE TABLE feed_pending (
	subscription TEXT    NOT NULL,
	event        TEXT    NOT NULL,
	key          TEXT    NOT NULL,
	meeting      TEXT    NOT NULL,
	PRIMARY KEY (subscription, event)
) STRICT;
