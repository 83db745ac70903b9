-- One narrow row of size measures per message, from a block sample of `messages`
-- (TABLESAMPLE SYSTEM reads only the chosen blocks, plus the TOAST chunks of the rows in them;
-- `--exact` passes 100 percent, which reads every block). Python aggregates the rows and
-- unpacks the columns by position (sizes.ContentTally.add).
--   disk_bytes     pg_column_size(content): stored size, after TOAST compression
--   logical_bytes  octet_length(content::text): the JSON as text, the size oversized-message compares
--   rest_bytes     size as text of the object without its "output" key (tool output = the difference)
--   results        legacy assistant rows, per tool_results element: [name, size as text without
--                  "output" (or whole, when it has none), size of "output" as text]
-- Serialising only what is not already known keeps big outputs to one serialisation each.
-- The inner query detoasts `content` once (`#> '{}'` hands back the detoasted value) and
-- OFFSET 0 keeps it from being merged into the outer one, which would detoast at every use.
SELECT r.id,
       r.session_id,
       r.role,
       r.block,
       r.disk_bytes,
       octet_length(CAST(r.v AS text)) AS logical_bytes,
       r.v ->> 'name' AS tool_name,
       CASE WHEN jsonb_typeof(r.v) = 'object' AND r.v ? 'output'
            THEN octet_length(CAST(r.v - 'output' AS text)) END AS rest_bytes,
       CASE WHEN jsonb_typeof(r.v -> 'tool_results') = 'array'
            THEN (SELECT jsonb_agg(jsonb_build_array(
                             e ->> 'name',
                             CASE WHEN jsonb_typeof(e) = 'object' AND e ? 'output'
                                  THEN octet_length(CAST(e - 'output' AS text))
                                  ELSE octet_length(CAST(e AS text)) END,
                             CASE WHEN jsonb_typeof(e) = 'object' AND e ? 'output'
                                  THEN octet_length(CAST(e -> 'output' AS text)) END))
                  FROM jsonb_array_elements(r.v -> 'tool_results') e) END AS results
FROM (
    SELECT m.id,
           CAST(m.session_id AS text) AS session_id,
           m.role,
           CAST((CAST(CAST(m.ctid AS text) AS point))[0] AS bigint) AS block,
           pg_column_size(m.content) AS disk_bytes,
           {content_jsonb} #> '{}' AS v
    FROM messages m TABLESAMPLE SYSTEM (CAST(:percent AS float4)) REPEATABLE (CAST(:seed AS float8))
    OFFSET 0
) r
