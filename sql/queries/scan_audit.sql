-- audit_log rows of all sessions, in session order (merged with the message stream).
SELECT a.session_id::text AS session_id, to_jsonb(a) AS row
FROM audit_log a
WHERE a.session_id IS NOT NULL
ORDER BY a.session_id, a.created_at, a.id
