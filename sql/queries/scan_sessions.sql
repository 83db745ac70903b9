-- The sessions a scan covers, in session-id order (the order every scan stream shares).
-- :limit keeps the newest N matching sessions (NULL: all).
SELECT s.id::text AS id, s.title, s.status, s.goal, s.model, s.created_at, s.updated_at
FROM sessions s
WHERE {session_filter}
  AND (CAST(:limit AS bigint) IS NULL OR s.id IN (
        SELECT s.id FROM sessions s WHERE {session_filter}
        ORDER BY s.created_at DESC, s.id LIMIT CAST(:limit AS bigint)))
ORDER BY s.id
