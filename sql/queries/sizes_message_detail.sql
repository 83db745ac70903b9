-- Details of a few messages by id (the largest ones): which top-level key holds the bytes, the
-- tool name(s). Primary-key lookups only.
SELECT r.id,
       jsonb_typeof(r.v) AS kind,
       CASE WHEN r.role = 'tool' OR r.v ? 'output' THEN r.v ->> 'name' END AS tool_name,
       jsonb_path_query_array(r.v, 'lax $.tool_calls[*].name')
         || jsonb_path_query_array(r.v, 'lax $.tool_calls[*].function.name') AS call_names,
       jsonb_path_query_array(r.v, 'lax $.tool_results[*].name') AS result_names,
       k.key AS largest_key,
       k.bytes AS largest_key_bytes
FROM (
    SELECT m.id, m.role,
           {content_jsonb} #> '{}' AS v
    FROM messages m
    WHERE m.id = ANY(CAST(:ids AS bigint[]))
    OFFSET 0
) r
LEFT JOIN LATERAL (
    SELECT e.key, octet_length(CAST(e.value AS text)) AS bytes
    FROM jsonb_each(CASE WHEN jsonb_typeof(r.v) = 'object' THEN r.v END) e
    ORDER BY 2 DESC, 1
    LIMIT 1
) k ON true
