-- Size of the current database on disk (catalog figure; takes no table locks).
SELECT current_database() AS database,
       pg_catalog.pg_database_size(current_database()) AS bytes
