-- On-disk sizes of one table (by oid), as the catalog size functions report them. Each function
-- takes an ACCESS SHARE lock on the relation, so this statement waits (up to lock_timeout)
-- behind an ACCESS EXCLUSIVE lock such as VACUUM FULL or ALTER TABLE holds.
SELECT pg_catalog.pg_relation_size(CAST(CAST(:oid AS oid) AS regclass), 'main') AS heap_bytes,
       CASE WHEN CAST(:toast_oid AS oid) <> 0
            THEN pg_catalog.pg_total_relation_size(CAST(CAST(:toast_oid AS oid) AS regclass))
            ELSE 0 END AS toast_bytes,
       CASE WHEN CAST(:toast_oid AS oid) <> 0
            THEN pg_catalog.pg_relation_size(CAST(CAST(:toast_oid AS oid) AS regclass), 'main')
            ELSE 0 END AS toast_heap_bytes,
       pg_catalog.pg_table_size(CAST(CAST(:oid AS oid) AS regclass)) AS table_bytes,
       pg_catalog.pg_indexes_size(CAST(CAST(:oid AS oid) AS regclass)) AS index_bytes,
       pg_catalog.pg_total_relation_size(CAST(CAST(:oid AS oid) AS regclass)) AS total_bytes
