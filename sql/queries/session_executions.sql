-- Executions (approvals, runs) of one session, oldest first.
SELECT to_jsonb(e) AS row
FROM nomos_plan_executions e
WHERE e.session_id = CAST(:session_id AS uuid)
ORDER BY e.requested_at, e.id
