-- The state several replicas of the bot share. Instants are timestamptz;
-- identifiers sort byte by byte (COLLATE "C"), as they do in SQLite.

-- Cursors: per subscription, the instant up to which the sweep is complete.
CREATE TABLE cursors (
	subscription text COLLATE "C" PRIMARY KEY,
	at           timestamptz NOT NULL
);

-- The ledger: one row per trigger key, scoped by subscription.
CREATE TABLE ledger (
	subscription text COLLATE "C" NOT NULL,
	key          text COLLATE "C" NOT NULL,
	event_id     text        NOT NULL,
	offset_ms    bigint      NOT NULL,
	start_at     timestamptz NOT NULL,
	trigger_at   timestamptz NOT NULL,
	outcome      text        NOT NULL CHECK (outcome IN ('sending', 'sent', 'skipped', 'failed')),
	reason       text        NOT NULL DEFAULT '',
	retryable    boolean     NOT NULL DEFAULT false,
	late         boolean     NOT NULL DEFAULT false,
	attempts     integer     NOT NULL DEFAULT 0,
	channel      text        NOT NULL DEFAULT '',
	message_ts   text        NOT NULL DEFAULT '',
	owner        text        NOT NULL DEFAULT '', -- the replica holding or last holding the claim; '' once released
	lease_until  timestamptz,
	claimed_at   timestamptz,
	settled_at   timestamptz,
	PRIMARY KEY (subscription, key)
);

CREATE INDEX ledger_trigger ON ledger (trigger_at);
CREATE INDEX ledger_start ON ledger (start_at);
CREATE INDEX ledger_sending ON ledger (subscription) WHERE outcome = 'sending';

-- Replicas: every open store, one row each. alive_until is its heartbeat:
-- while it is ahead of the database's clock, the claims the replica holds
-- are its own whatever their leases say. A replica that closes deletes
-- its row. sharing_until says the replica sweeps a share of the
-- subscriptions (NULL for one that only reads, such as bot audit).
CREATE TABLE replicas (
	owner         text COLLATE "C" PRIMARY KEY,
	started_at    timestamptz NOT NULL,
	alive_until   timestamptz NOT NULL,
	sharing_until timestamptz
);

-- Subscription leases: which replica sweeps each subscription, until when.
-- owner '' is a subscription nobody holds. handover: its owner, holding
-- more than its share, offers it to a replica below its own; the owner
-- sweeps it until one takes it.
CREATE TABLE subscription_leases (
	subscription text COLLATE "C" PRIMARY KEY,
	owner        text COLLATE "C" NOT NULL DEFAULT '',
	expires_at   timestamptz NOT NULL DEFAULT '-infinity',
	handover     boolean NOT NULL DEFAULT false,
	taken_at     timestamptz
);

CREATE INDEX subscription_leases_owner ON subscription_leases (owner);
