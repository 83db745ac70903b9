-- Live and dead row counts and the last (auto)vacuum and (auto)analyze of the Nomos tables, from
-- the cumulative statistics of the node this connection is on.
SELECT s.relname AS table_name,
       s.n_live_tup AS live_rows,
       s.n_dead_tup AS dead_rows,
       s.last_vacuum,
       s.last_autovacuum,
       s.last_analyze,
       s.last_autoanalyze,
       s.vacuum_count,
       s.autovacuum_count
FROM pg_catalog.pg_stat_user_tables s
WHERE s.relname = ANY(CAST(:tables AS text[]))
  AND pg_catalog.pg_table_is_visible(s.relid)
ORDER BY s.relname
