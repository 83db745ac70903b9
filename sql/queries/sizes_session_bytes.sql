-- Stored (on-disk) content bytes and message counts of a few sessions (uuid ids), exact, through
-- the sessions primary key and the messages (session_id, id) index. pg_column_size reads the
-- TOAST pointer of an out-of-line value; it does not detoast it.
SELECT CAST(s.id AS text) AS session_id,
       s.title,
       count(m.id) AS messages,
       coalesce(sum(pg_column_size(m.content)), 0) AS disk_bytes
FROM sessions s
JOIN messages m ON m.session_id = s.id
WHERE s.id = ANY(CAST(:ids AS uuid[]))
GROUP BY s.id, s.title
