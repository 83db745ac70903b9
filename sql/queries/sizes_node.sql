-- Which node `sizes` reads (its counters are per node), and the server facts it needs.
SELECT current_database() AS database,
       pg_catalog.pg_is_in_recovery() AS standby,
       host(pg_catalog.inet_server_addr()) AS address,
       pg_catalog.inet_server_port() AS port,
       current_setting('server_version') AS server_version,
       CAST(current_setting('server_version_num') AS integer) AS server_version_num,
       CAST(current_setting('block_size') AS integer) AS block_size,
       (SELECT d.stats_reset FROM pg_catalog.pg_stat_database d
        WHERE d.datname = current_database()) AS stats_reset
