-- Fragment: ids of the sessions a filtered scan covers (the newest :limit when set), and of
-- those the worker's hash partition (scan --jobs): the limit applies before partitioning.
SELECT s.id FROM sessions s WHERE {session_filter}
  AND (CAST(:limit AS bigint) IS NULL OR s.id IN (
        SELECT s.id FROM sessions s WHERE {session_filter}
        ORDER BY s.created_at DESC, s.id LIMIT CAST(:limit AS bigint)))
  AND (CAST(:partitions AS integer) = 1
       OR mod(abs(hashtext(s.id::text)), CAST(:partitions AS integer)) = CAST(:partition AS integer))
