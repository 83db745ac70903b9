-- Columns of the Nomos tables visible on the search path (one catalog query per run), whether
-- the connected role may read each, and whether row-level security filters the table's rows
-- for it (enabled, and the role neither bypasses it nor owns the table without FORCE).
SELECT c.relname AS table_name,
       a.attname AS column_name,
       format_type(a.atttypid, a.atttypmod) AS data_type,
       a.attnotnull AS not_null,
       pg_catalog.has_column_privilege(c.oid, a.attnum, 'SELECT') AS readable,
       (c.relrowsecurity
        AND NOT r.rolsuper AND NOT r.rolbypassrls
        AND (c.relforcerowsecurity OR NOT pg_catalog.pg_has_role(c.relowner, 'USAGE'))) AS row_security,
       (SELECT count(*) FROM pg_catalog.pg_policies p
        WHERE p.schemaname = n.nspname AND p.tablename = c.relname
          AND (p.roles && ARRAY['public', current_user]::name[]
               OR EXISTS (SELECT 1 FROM unnest(p.roles) AS role
                          WHERE role <> 'public' AND pg_catalog.pg_has_role(role, 'USAGE')))) AS policies
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
CROSS JOIN pg_catalog.pg_roles r
WHERE r.rolname = current_user
  AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND c.relname = ANY(CAST(:tables AS text[]))
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY c.relname, a.attnum
