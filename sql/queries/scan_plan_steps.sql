-- Plans with their steps for all sessions, one row per session in session order: one JSON array
-- of [plan, step] pairs (step null for a plan without steps), in plan then step order (see
-- scan_audit.sql for why one array).
SELECT json_agg(json_build_array(to_jsonb(p), to_jsonb(s)) ORDER BY p.created_at, p.id, s.seq, s.id)::text AS rows,
       p.session_id::text AS session_id
FROM nomos_plans p
LEFT JOIN nomos_plan_steps s ON s.plan_id = p.id
WHERE p.session_id IS NOT NULL
GROUP BY p.session_id
ORDER BY p.session_id
