-- audit_log rows of one session, oldest first, whole rows as JSON (robust to older/extra columns).
SELECT to_jsonb(a) AS row
FROM audit_log a
WHERE a.session_id = CAST(:session_id AS uuid)
ORDER BY a.created_at, a.id
