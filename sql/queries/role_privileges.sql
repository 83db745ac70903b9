-- What the connected role could write were the session not read-only: whether it is a
-- superuser (or bypasses row-level security), and the Nomos tables (of :tables) on which it holds any write privilege.
SELECT coalesce((SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = current_user), false) AS superuser,
       coalesce((SELECT r.rolbypassrls FROM pg_roles r WHERE r.rolname = current_user), false) AS bypassrls,
       ARRAY(SELECT c.relname::text
             FROM pg_class c
             WHERE c.relname = ANY(CAST(:tables AS text[]))
               AND c.relkind IN ('r', 'p')
               AND pg_table_is_visible(c.oid)
               AND has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE')
             ORDER BY c.relname) AS writable
