-- Plans of one session with their steps (a plan without steps gives one row with step NULL).
SELECT to_jsonb(p) AS plan, to_jsonb(s) AS step
FROM nomos_plans p
LEFT JOIN nomos_plan_steps s ON s.plan_id = p.id
WHERE p.session_id = CAST(:session_id AS uuid)
ORDER BY p.created_at, p.id, s.seq, s.id
