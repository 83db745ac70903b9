-- Fragment: messages with their content detoasted once. `c.v` is content || '{}': the same
-- object for objects (non-objects become arrays, and are shipped raw instead); without the
-- OFFSET 0 barrier Postgres would decompress a large value once per expression using it.
messages m
CROSS JOIN LATERAL (SELECT {content_jsonb} || '{}'::jsonb AS v OFFSET 0) c
