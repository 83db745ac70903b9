-- Fragment: the slim message projection shared by session_messages and scan_messages.
-- `content` is shipped whole only when a rule needs it (:full_content) or when the row is not
-- a plain object. logical_bytes (the JSON as text) is exact for every message whose
-- uncompressed jsonb size (pg_column_size of the detoasted value, free) reaches :logical_floor.
-- `reasoning`: the message carries a reasoning trace (reasoning, reasoning_content or thinking).
-- `result_errors`: for a legacy assistant row whose tool_results hold an error, each result's
-- error flag in order (JSON text); NULL when none failed, which is nearly always.
-- `call_digests`: per tool call, in order and comma-separated, 16 hex digits: md5 of its
-- arguments (their first 2,048 characters as JSON text, or the string they were sent as) with hex
-- runs of 8 or more, numbers and whitespace masked (8 digits: the call's shape), then md5 of them
-- unmasked (8 digits: the call itself). tool-fanout tells a loop over items from a busy turn by them.
-- `output_head`: a tool row's output, its first 240 characters (an object output of under 16 KB
-- as JSON text, a larger one not at all): what unexplained failures read of an error.
-- Tool-call and tool-result names come as JSON text, which the client decodes once per distinct
-- list (a database has few). Needs the message_source fragment as its FROM clause.
m.id,
       m.role,
       m.created_at,
       coalesce(jsonb_typeof(c.v) IS DISTINCT FROM 'object'
                OR jsonb_typeof(c.v -> 'tool_calls') = 'string'
                OR CAST(:full_content AS boolean), false) AS content_shipped,
       CASE WHEN jsonb_typeof(c.v) IS DISTINCT FROM 'object'
                 OR jsonb_typeof(c.v -> 'tool_calls') = 'string'
                 OR CAST(:full_content AS boolean)
            THEN {content_jsonb} END AS content,
       CASE WHEN m.role <> 'tool'
            THEN coalesce(c.v ->> 'text',
                          CASE WHEN jsonb_typeof(c.v -> 'content') = 'string' THEN c.v ->> 'content' END)
       END AS text,
       NULLIF(jsonb_path_query_array(c.v, 'lax $.tool_calls[*].name')
              || jsonb_path_query_array(c.v, 'lax $.tool_calls[*].function.name'), '[]')::text AS call_names,
       CASE jsonb_typeof(c.v -> 'tool_calls')
            WHEN 'array' THEN jsonb_array_length(c.v -> 'tool_calls')
            WHEN 'object' THEN 1 ELSE 0 END AS call_count,
       NULLIF(jsonb_path_query_array(c.v, 'lax $.tool_results[*].name'), '[]')::text AS result_names,
       CASE jsonb_typeof(c.v -> 'tool_results')
            WHEN 'array' THEN jsonb_array_length(c.v -> 'tool_results')
            WHEN 'object' THEN 1 ELSE 0 END AS result_count,
       c.v ->> 'name' AS tool_name,
       c.v ->> 'is_error' AS is_error,
       c.v ->> 'error' AS error,
       c.v ->> 'finish_reason' AS finish_reason,
       pg_column_size(m.content) AS disk_bytes,
       CASE WHEN pg_column_size(c.v) >= CAST(:logical_floor AS integer)
            THEN octet_length(CASE WHEN jsonb_typeof(c.v) = 'object' THEN c.v ELSE {content_jsonb} END::text)
       END AS logical_bytes,
       btrim(coalesce(c.v ->> 'reasoning', c.v ->> 'reasoning_content', c.v ->> 'thinking', '')) <> '' AS reasoning,
       CASE WHEN jsonb_typeof(c.v -> 'tool_results') = 'array'
                 AND c.v @? 'lax $.tool_results[*] ? (@.is_error == true || @.is_error == "true")'
            THEN (SELECT jsonb_agg(coalesce(e ->> 'is_error', '') = 'true' ORDER BY n)
                  FROM jsonb_array_elements(c.v -> 'tool_results') WITH ORDINALITY AS r(e, n))::text
       END AS result_errors,
       CASE WHEN m.role = 'tool' THEN
            left(CASE WHEN jsonb_typeof(c.v -> 'output') = 'string' THEN c.v ->> 'output'
                      WHEN jsonb_typeof(c.v -> 'content') = 'string' THEN c.v ->> 'content'
                      WHEN jsonb_typeof(c.v -> 'text') = 'string' THEN c.v ->> 'text'
                      WHEN pg_column_size(c.v -> 'output') < 16384 THEN (c.v -> 'output')::text
                 END, 240)
       END AS output_head,
       CASE WHEN jsonb_typeof(c.v -> 'tool_calls') IN ('array', 'object') THEN
            (SELECT string_agg(left(md5(regexp_replace(a, '[0-9a-f]{8,}|[0-9]+|\s+', '#', 'gi')), 8)
                               || left(md5(a), 8), ',' ORDER BY n)
             FROM (SELECT n, left(CASE WHEN jsonb_typeof(x) = 'string' THEN x #>> '{}'
                                       ELSE coalesce(x::text, 'null') END, 2048) AS a
                   FROM (SELECT n, coalesce(e -> 'arguments', e -> 'function' -> 'arguments', e -> 'input') AS x
                         FROM jsonb_array_elements(CASE jsonb_typeof(c.v -> 'tool_calls')
                                                       WHEN 'array' THEN c.v -> 'tool_calls'
                                                       ELSE jsonb_build_array(c.v -> 'tool_calls') END)
                              WITH ORDINALITY AS t(e, n)) AS items) AS calls)
       END AS call_digests
