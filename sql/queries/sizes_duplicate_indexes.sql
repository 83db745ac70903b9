-- Pairs of indexes on the same Nomos table with the same key columns (same operator classes,
-- expressions, predicate and access method). `index_name` is the redundant one: a non-unique
-- index before a unique one, else the one created later.
SELECT t.relname AS table_name,
       ia.relname AS index_name,
       ib.relname AS duplicate_of,
       pg_catalog.pg_relation_size(ia.oid) AS bytes,
       pg_catalog.pg_get_indexdef(ia.oid) AS definition,
       pg_catalog.pg_get_indexdef(ib.oid) AS duplicate_of_definition
FROM pg_catalog.pg_index a
JOIN pg_catalog.pg_index b
  ON b.indrelid = a.indrelid
 AND b.indexrelid <> a.indexrelid
 AND b.indnkeyatts = a.indnkeyatts
JOIN pg_catalog.pg_class ia ON ia.oid = a.indexrelid
JOIN pg_catalog.pg_class ib ON ib.oid = b.indexrelid
JOIN pg_catalog.pg_class t ON t.oid = a.indrelid
WHERE t.relname = ANY(CAST(:tables AS text[]))
  AND pg_catalog.pg_table_is_visible(t.oid)
  AND ia.relam = ib.relam
  AND (CAST(a.indkey AS int2[]))[0:a.indnkeyatts - 1] = (CAST(b.indkey AS int2[]))[0:b.indnkeyatts - 1]
  AND (CAST(a.indclass AS oid[]))[0:a.indnkeyatts - 1] = (CAST(b.indclass AS oid[]))[0:b.indnkeyatts - 1]
  AND (CAST(a.indcollation AS oid[]))[0:a.indnkeyatts - 1] = (CAST(b.indcollation AS oid[]))[0:b.indnkeyatts - 1]
  AND pg_catalog.pg_get_expr(a.indexprs, a.indrelid) IS NOT DISTINCT FROM pg_catalog.pg_get_expr(b.indexprs, b.indrelid)
  AND pg_catalog.pg_get_expr(a.indpred, a.indrelid) IS NOT DISTINCT FROM pg_catalog.pg_get_expr(b.indpred, b.indrelid)
  AND (b.indisunique AND NOT a.indisunique
       OR (a.indisunique = b.indisunique AND a.indexrelid > b.indexrelid))
ORDER BY t.relname, ia.relname
