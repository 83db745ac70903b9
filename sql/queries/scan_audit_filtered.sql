-- As scan_audit.sql, for the sessions of a filtered scan only.
SELECT json_agg(to_jsonb(a) ORDER BY a.created_at, a.id)::text AS rows, a.session_id::text AS session_id
FROM audit_log a
WHERE a.session_id IN ({scan_session_ids})
GROUP BY a.session_id
ORDER BY a.session_id
