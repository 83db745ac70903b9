-- As scan_audit.sql, for the sessions of a filtered scan only.
SELECT a.session_id::text AS session_id, to_jsonb(a) AS row
FROM audit_log a
WHERE a.session_id IN ({scan_session_ids})
ORDER BY a.session_id, a.created_at, a.id
