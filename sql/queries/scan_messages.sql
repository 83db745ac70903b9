-- Every message, streamed in (session_id, id) order, exactly the order of a plain dump of the
-- table; the client re-sorts each session by (created_at, id). The filtered variant is
-- scan_messages_filtered.sql.
SELECT {message_columns},
       m.session_id::text AS session_id
FROM {message_source}
ORDER BY m.session_id, m.id
