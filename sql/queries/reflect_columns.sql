-- Columns of the Nomos tables visible on the search path (one catalog query per run).
SELECT c.relname AS table_name,
       a.attname AS column_name,
       format_type(a.atttypid, a.atttypmod) AS data_type,
       a.attnotnull AS not_null
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND c.relname = ANY(CAST(:tables AS text[]))
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY c.relname, a.attnum
