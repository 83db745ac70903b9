-- audit_log rows of all sessions, one row per session in session order (merged with the message
-- stream): the session's rows as one JSON array, oldest first. One array per session is decoded
-- in one call, where a row each cost the client about five times the CPU (psycopg's per-row
-- work and a loader call per value).
SELECT json_agg(to_jsonb(a) ORDER BY a.created_at, a.id)::text AS rows, a.session_id::text AS session_id
FROM audit_log a
WHERE a.session_id IS NOT NULL
GROUP BY a.session_id
ORDER BY a.session_id
