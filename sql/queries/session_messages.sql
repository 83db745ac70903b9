-- One session's messages, slim: what rules need is extracted here so large tool outputs stay
-- on the server. `content` is shipped whole only when a rule needs it (:full_content) or when
-- the row is not a plain object (double-encoded, bare string, array, null), for Python to
-- normalise. logical_bytes (the JSON as text) is computed only for rows whose on-disk size
-- reaches :logical_floor, because it detoasts and re-serialises the value.
SELECT {message_columns}
FROM {message_source}
WHERE m.session_id = CAST(:session_id AS uuid)
ORDER BY m.created_at, m.id
