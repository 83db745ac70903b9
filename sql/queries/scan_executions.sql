-- Executions of all sessions, one row per session in session order: the session's executions as
-- one JSON array, oldest first (see scan_audit.sql for why one array).
SELECT json_agg(to_jsonb(e) ORDER BY e.requested_at, e.id)::text AS rows, e.session_id::text AS session_id
FROM nomos_plan_executions e
WHERE e.session_id IS NOT NULL
GROUP BY e.session_id
ORDER BY e.session_id
