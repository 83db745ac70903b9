-- scan --jobs auto: how many more connections the server takes, and how many more this role and
-- this database may open (rolconnlimit, datconnlimit: -1 for no limit; superusers are exempt
-- from neither here, to stay well inside what an operator set).
SELECT current_setting('max_connections')::integer AS max_connections,
       current_setting('superuser_reserved_connections')::integer
         + coalesce(nullif(current_setting('reserved_connections', true), '')::integer, 0) AS reserved,
       (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend') AS used,
       (SELECT r.rolconnlimit FROM pg_roles r WHERE r.rolname = current_user) AS role_limit,
       (SELECT count(*) FROM pg_stat_activity a
        WHERE a.backend_type = 'client backend' AND a.usename = current_user) AS role_used,
       (SELECT d.datconnlimit FROM pg_database d WHERE d.datname = current_database()) AS database_limit,
       (SELECT count(*) FROM pg_stat_activity a
        WHERE a.backend_type = 'client backend' AND a.datname = current_database()) AS database_used
