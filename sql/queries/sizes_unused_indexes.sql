-- Indexes on the Nomos tables never scanned since the statistics were reset on this node, except
-- those that enforce something (primary key, unique, exclusion constraint).
SELECT t.relname AS table_name,
       i.relname AS index_name,
       s.idx_scan,
       pg_catalog.pg_relation_size(i.oid) AS bytes,
       pg_catalog.pg_get_indexdef(i.oid) AS definition
FROM pg_catalog.pg_index x
JOIN pg_catalog.pg_class i ON i.oid = x.indexrelid
JOIN pg_catalog.pg_class t ON t.oid = x.indrelid
JOIN pg_catalog.pg_stat_all_indexes s ON s.indexrelid = x.indexrelid
WHERE t.relname = ANY(CAST(:tables AS text[]))
  AND pg_catalog.pg_table_is_visible(t.oid)
  AND s.idx_scan = 0
  AND NOT x.indisunique
  AND NOT x.indisprimary
  AND NOT x.indisexclusion
ORDER BY pg_catalog.pg_relation_size(i.oid) DESC, t.relname, i.relname
