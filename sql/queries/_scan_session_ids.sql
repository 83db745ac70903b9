-- Fragment: ids of the sessions a filtered scan covers (the newest :limit when set), and of
-- those the hash partition :partition of :partitions (scan --jobs workers, scan --shard): the
-- limit applies before partitioning. The hash is widened before abs() (abs(-2^31) overflows).
SELECT s.id FROM sessions s WHERE {session_filter}
  AND (CAST(:limit AS bigint) IS NULL OR s.id IN (
        SELECT s.id FROM sessions s WHERE {session_filter}
        ORDER BY s.created_at DESC, s.id LIMIT CAST(:limit AS bigint)))
  AND (CAST(:partitions AS integer) = 1
       OR mod(abs(hashtext(s.id::text)::bigint), CAST(:partitions AS integer)) = CAST(:partition AS integer))
