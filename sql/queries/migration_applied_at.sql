-- When a Nomos migration was applied (compare --at migration:NNN); no row when it was not.
SELECT applied_at FROM schema_migrations WHERE version = CAST(:version AS integer)
