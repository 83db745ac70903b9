-- What the database holds, for the line an empty selection gets: how many sessions, and the
-- first and last day they were created (UTC; a timestamp Python cannot hold, such as infinity,
-- is left out).
SELECT count(DISTINCT s.id) AS sessions,
       to_char(min(s.created_at) FILTER (WHERE isfinite(s.created_at)) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS first,
       to_char(max(s.created_at) FILTER (WHERE isfinite(s.created_at)) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS last
FROM sessions s
