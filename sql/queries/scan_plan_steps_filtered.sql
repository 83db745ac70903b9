-- As scan_plan_steps.sql, for the sessions of a filtered scan only.
SELECT json_agg(json_build_array(to_jsonb(p), to_jsonb(s)) ORDER BY p.created_at, p.id, s.seq, s.id)::text AS rows,
       p.session_id::text AS session_id
FROM nomos_plans p
LEFT JOIN nomos_plan_steps s ON s.plan_id = p.id
WHERE p.session_id IN ({scan_session_ids})
GROUP BY p.session_id
ORDER BY p.session_id
