-- The reason code: why an entry ended as it did, for machines (metrics, the
-- audit), beside the human reason. Existing rows get the code their reason
-- text stood for.
ALTER TABLE ledger ADD COLUMN code TEXT NOT NULL DEFAULT '';

UPDATE ledger SET code = 'started'
	WHERE outcome = 'skipped' AND reason LIKE 'started%';
UPDATE ledger SET code = 'no_longer_due'
	WHERE outcome = 'skipped' AND reason LIKE 'meeting no longer due%';
UPDATE ledger SET code = 'subscription_removed'
	WHERE outcome = 'skipped' AND reason LIKE 'subscription removed%';
UPDATE ledger SET code = 'stopped'
	WHERE outcome = 'failed' AND retryable = 1 AND reason = 'stopped before sending';
UPDATE ledger SET code = 'transient'
	WHERE outcome = 'failed' AND retryable = 1 AND code = '';
UPDATE ledger SET code = 'permanent'
	WHERE outcome = 'failed' AND retryable = 0;
UPDATE ledger SET code = 'interrupted_confirmed'
	WHERE outcome = 'sent' AND reason LIKE 'confirmed in Slack%';
UPDATE ledger SET code = 'resent'
	WHERE outcome = 'sent' AND reason LIKE 'resent%';
UPDATE ledger SET code = 'unconfirmed'
	WHERE outcome = 'sending' AND owner = '';
