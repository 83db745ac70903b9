-- Executions of all sessions, in session order.
SELECT e.session_id::text AS session_id, to_jsonb(e) AS row
FROM nomos_plan_executions e
WHERE e.session_id IS NOT NULL
ORDER BY e.session_id, e.requested_at, e.id
