-- As scan_executions.sql, for the sessions of a filtered scan only.
SELECT e.session_id::text AS session_id, to_jsonb(e) AS row
FROM nomos_plan_executions e
WHERE e.session_id IN ({scan_session_ids})
ORDER BY e.session_id, e.requested_at, e.id
