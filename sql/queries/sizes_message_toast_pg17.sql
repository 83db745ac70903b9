-- PostgreSQL 17+: whether each message's content is stored out of line (in the TOAST table).
SELECT m.id, pg_column_toast_chunk_id(m.content) IS NOT NULL AS out_of_line
FROM messages m
WHERE m.id = ANY(CAST(:ids AS bigint[]))
