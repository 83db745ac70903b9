-- Highest applied Nomos migration.
SELECT max(version) AS version FROM schema_migrations
