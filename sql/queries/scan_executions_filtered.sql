-- As scan_executions.sql, for the sessions of a filtered scan only.
SELECT json_agg(to_jsonb(e) ORDER BY e.requested_at, e.id)::text AS rows, e.session_id::text AS session_id
FROM nomos_plan_executions e
WHERE e.session_id IN ({scan_session_ids})
GROUP BY e.session_id
ORDER BY e.session_id
