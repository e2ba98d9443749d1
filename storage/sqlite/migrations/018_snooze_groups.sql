-- A person has one pending snooze per meeting and mode, whichever of the
-- meeting's reminders they clicked (meetingbot.SnoozeGroup,
-- snooze:<user>:<event ID>:<mode>), where it was one per reminder. The
-- snoozes pending now take their new group, the earliest of each group
-- only: a second one, made before this migration, keeps its old group
-- and still fires.
UPDATE timers SET grp = 'snooze:' || subject || ':' || json_extract(payload, '$.meeting.ID') || ':' || json_extract(payload, '$.mode')
WHERE kind = 'snooze' AND state = 'pending' AND json_valid(payload)
	AND coalesce(json_extract(payload, '$.meeting.ID'), '') <> '' AND coalesce(json_extract(payload, '$.mode'), '') <> ''
	AND key = (SELECT min(o.key) FROM timers o
		WHERE o.kind = 'snooze' AND o.state = 'pending' AND o.subject = timers.subject AND json_valid(o.payload)
			AND json_extract(o.payload, '$.meeting.ID') = json_extract(timers.payload, '$.meeting.ID')
			AND json_extract(o.payload, '$.mode') = json_extract(timers.payload, '$.mode'));
