-- The sessions a scan covers, in session-id order (the order every scan stream shares).
SELECT s.id::text AS id, s.title, s.status, s.goal, s.model, s.created_at, s.updated_at
FROM sessions s
WHERE s.id IN ({scan_session_ids})
ORDER BY s.id
