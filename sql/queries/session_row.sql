-- One session row.
SELECT s.id::text AS id, s.title, s.status, s.goal, s.model, s.created_at, s.updated_at
FROM sessions s
WHERE s.id = CAST(:session_id AS uuid)
