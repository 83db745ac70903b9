-- How many sessions a scan will cover (for the progress bar).
SELECT count(*) AS n FROM (
    SELECT s.id FROM sessions s WHERE {session_filter}
    ORDER BY s.created_at DESC, s.id LIMIT CAST(:limit AS bigint)
) picked
