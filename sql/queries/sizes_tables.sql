-- The Nomos tables present on the search path, from pg_class only (no relation locks):
-- planner statistics (reltuples, relpages) of each table and of its TOAST table, and the
-- table's toast_tuple_target if set.
SELECT c.oid::bigint AS oid,
       c.relname AS table_name,
       c.relkind::text AS relkind,
       c.reltuples::float8 AS reltuples,
       c.relpages::bigint AS relpages,
       c.reltoastrelid::bigint AS toast_oid,
       t.reltuples::float8 AS toast_reltuples,
       t.relpages::bigint AS toast_relpages,
       (SELECT o.option_value FROM pg_catalog.pg_options_to_table(c.reloptions) o
        WHERE o.option_name = 'toast_tuple_target') AS toast_tuple_target
FROM pg_catalog.pg_class c
LEFT JOIN pg_catalog.pg_class t ON t.oid = c.reltoastrelid
WHERE c.relname = ANY(CAST(:tables AS text[]))
  AND c.relkind IN ('r', 'p', 'm')
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY c.relname
