-- Each ledger entry says which kind of subscription it is of
-- (meetingbot.Kind): the engines read it instead of a prefix of the
-- subscription's ID. Entries written before are given theirs from the
-- prefix their pseudo-subscriptions were always made with; the others,
-- reminders, keep the empty kind.
ALTER TABLE ledger ADD COLUMN kind TEXT NOT NULL DEFAULT '';
UPDATE ledger SET kind = 'status' WHERE subscription LIKE 'status:%';
UPDATE ledger SET kind = 'snooze' WHERE subscription LIKE 'snooze:%';
UPDATE ledger SET kind = 'invite' WHERE subscription LIKE 'invite:%';
UPDATE ledger SET kind = 'agenda' WHERE subscription LIKE 'agenda:%';
