-- As sizes_session_bytes, for databases whose session ids are text (tolerated, see schema.py).
SELECT CAST(s.id AS text) AS session_id,
       s.title,
       count(m.id) AS messages,
       coalesce(sum(pg_column_size(m.content)), 0) AS disk_bytes
FROM sessions s
JOIN messages m ON m.session_id = s.id
WHERE s.id = ANY(CAST(:ids AS text[]))
GROUP BY s.id, s.title
