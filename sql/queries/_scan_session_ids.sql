-- Fragment: ids of the sessions a filtered scan covers (the newest :limit when set).
SELECT s.id FROM sessions s WHERE {session_filter}
  AND (CAST(:limit AS bigint) IS NULL OR s.id IN (
        SELECT s.id FROM sessions s WHERE {session_filter}
        ORDER BY s.created_at DESC, s.id LIMIT CAST(:limit AS bigint)))
