-- Every message of every session the scan covers, streamed in (session_id, id) order; the
-- client re-sorts each session by (created_at, id). Unfiltered scans read the table in the
-- same order as a plain dump, so the planner treats both alike.
SELECT m.session_id::text AS session_id, {message_columns}
FROM {message_source}
WHERE CAST(:unfiltered AS boolean)
   OR m.session_id IN (
        SELECT s.id FROM sessions s WHERE {session_filter}
          AND (CAST(:limit AS bigint) IS NULL OR s.id IN (
                SELECT s.id FROM sessions s WHERE {session_filter}
                ORDER BY s.created_at DESC, s.id LIMIT CAST(:limit AS bigint))))
ORDER BY m.session_id, m.id
