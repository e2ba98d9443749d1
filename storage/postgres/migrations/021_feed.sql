-- What each channel that follows its calendar's changes was last told of
-- each upcoming event (package feed): the event as a JSON meetingbot
-- Meeting, by the notices' pseudo-subscription (feed:<subscription>). A
-- change is a difference from it; the ledger keeps each notice once.
CREATE TABLE feed_seen (
	subscription text COLLATE "C" NOT NULL,
	event        text COLLATE "C" NOT NULL,
	meeting      jsonb NOT NULL,
	PRIMARY KEY (subscription, event)
);

-- When each channel's first reading of its calendar was taken: nothing
-- on the calendar then is announced (the agenda's job), and an event
-- that only now comes within the window read is not "added".
CREATE TABLE feed_primed (
	subscription text COLLATE "C" PRIMARY KEY,
	primed_at    timestamptz NOT NULL
);

-- A notice being posted, per event: the state it tells, under its ledger
-- key, kept until its outcome is known. A post whose answer was lost, or a
-- process killed after Slack stored it, may have told the channel that
-- state: the next pass asks the ledger (and Slack) before it compares.
CREATE TABLE feed_pending (
	subscription text COLLATE "C" NOT NULL,
	event        text COLLATE "C" NOT NULL,
	key          text  NOT NULL,
	meeting      jsonb NOT NULL,
	PRIMARY KEY (subscription, event)
);
