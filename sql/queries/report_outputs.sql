-- The report's transcripts, for the messages it carries (of the worst `--transcripts N`
-- sessions, read once after the scan's pass, by primary key): what the pass never ships, i.e.
-- each tool output and the tool calls' arguments, cut on the server to a head and a tail so a
-- 4 MB output sends a few hundred bytes.
SELECT m.id,
       length(o.t) AS output_chars,
       left(o.t, CAST(:head AS integer)) AS output_head,
       CASE WHEN length(o.t) > CAST(:head AS integer) THEN right(o.t, CAST(:tail AS integer)) END AS output_tail,
       left(NULLIF(jsonb_path_query_array(c.v, 'lax $.tool_calls[*].arguments')
                   || jsonb_path_query_array(c.v, 'lax $.tool_calls[*].function.arguments'), '[]')::text,
            CAST(:arguments AS integer)) AS arguments
FROM {message_source}
CROSS JOIN LATERAL (
    SELECT CASE
        WHEN jsonb_typeof(c.v -> 'output') = 'string' THEN c.v ->> 'output'
        WHEN c.v ? 'output' THEN (c.v -> 'output')::text
        WHEN jsonb_typeof(c.v -> 'tool_results') IN ('array', 'object')
            THEN (SELECT string_agg(CASE WHEN jsonb_typeof(x) = 'string' THEN x #>> '{}' ELSE x::text END, E'\n')
                  FROM jsonb_path_query(c.v, 'lax $.tool_results[*].output') AS x)
        WHEN m.role = 'tool'
            THEN coalesce(c.v ->> 'text', CASE WHEN jsonb_typeof(c.v -> 'content') = 'string'
                                                THEN c.v ->> 'content' ELSE (c.v -> 'content')::text END)
    END AS t
) o
WHERE m.id = ANY(CAST(:message_ids AS bigint[]))
