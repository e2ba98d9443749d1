-- A person has one pending snooze per meeting and mode, whichever of the
-- meeting's reminders they clicked (meetingbot.SnoozeGroup), where it was
-- one per reminder. As SQLite's 018: the earliest pending snooze of each
-- new group takes it; a second one keeps its old group and still fires.
UPDATE timers t SET grp = 'snooze:' || t.subject || ':' || (t.payload::jsonb -> 'meeting' ->> 'ID') || ':' || (t.payload::jsonb ->> 'mode')
WHERE t.kind = 'snooze' AND t.state = 'pending'
	AND coalesce(t.payload::jsonb -> 'meeting' ->> 'ID', '') <> '' AND coalesce(t.payload::jsonb ->> 'mode', '') <> ''
	AND t.key = (SELECT min(o.key) FROM timers o
		WHERE o.kind = 'snooze' AND o.state = 'pending' AND o.subject = t.subject
			AND o.payload::jsonb -> 'meeting' ->> 'ID' = t.payload::jsonb -> 'meeting' ->> 'ID'
			AND o.payload::jsonb ->> 'mode' = t.payload::jsonb ->> 'mode');
