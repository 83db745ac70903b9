-- scan --jobs auto: how many more connections the server takes.
SELECT current_setting('max_connections')::integer AS max_connections,
       current_setting('superuser_reserved_connections')::integer
         + coalesce(nullif(current_setting('reserved_connections', true), '')::integer, 0) AS reserved,
       (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend') AS used
