-- Server facts doctor prints: version, standby or primary, effective read-only mode and timeouts.
SELECT current_setting('server_version') AS server_version,
       pg_catalog.pg_is_in_recovery() AS in_recovery,
       current_setting('transaction_read_only') AS transaction_read_only,
       current_setting('default_transaction_read_only') AS default_read_only,
       current_setting('statement_timeout') AS statement_timeout,
       current_setting('lock_timeout') AS lock_timeout,
       current_database() AS database,
       current_user AS db_user,
       current_setting('server_encoding') AS server_encoding
