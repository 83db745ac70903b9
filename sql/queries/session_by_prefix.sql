-- Sessions whose id starts with a hex prefix (typed by a user); at most :max_candidates + 1 rows.
SELECT s.id::text AS id, s.title, s.created_at
FROM sessions s
WHERE s.id::text LIKE CAST(:prefix AS text) || '%'
ORDER BY s.created_at DESC
LIMIT CAST(:max_candidates AS integer) + 1
