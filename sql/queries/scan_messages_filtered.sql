-- The messages of the sessions a filtered scan covers, in (session_id, id) order. A plain
-- semi-join, so a small selection (--limit, --since) reads only its sessions through the
-- (session_id, id) index instead of the whole table.
SELECT {message_columns},
       m.session_id::text AS session_id
FROM {message_source}
WHERE m.session_id IN ({scan_session_ids})
ORDER BY m.session_id, m.id
