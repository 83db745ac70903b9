-- As scan_plan_steps.sql, for the sessions of a filtered scan only.
SELECT p.session_id::text AS session_id, to_jsonb(p) AS plan, to_jsonb(s) AS step
FROM nomos_plans p
LEFT JOIN nomos_plan_steps s ON s.plan_id = p.id
WHERE p.session_id IN ({scan_session_ids})
ORDER BY p.session_id, p.created_at, p.id, s.seq, s.id
