-- Newest sessions with message and tool-call counts, in one query (no per-session round trips).
-- Roles are trimmed and lower-cased, as the card reads them (' Assistant ' is the assistant).
SELECT s.id::text AS id, s.title, s.created_at, s.status, st.messages, st.tool_calls
FROM sessions s
LEFT JOIN LATERAL (
    SELECT count(*) AS messages,
           coalesce(sum(CASE jsonb_typeof({content_jsonb} -> 'tool_calls')
                            WHEN 'array' THEN jsonb_array_length({content_jsonb} -> 'tool_calls')
                            WHEN 'object' THEN 1 ELSE 0 END) FILTER (WHERE lower(btrim(m.role, E' \t\r\n')) = 'assistant'), 0)
             AS tool_calls
    FROM messages m
    WHERE m.session_id = s.id
) st ON true
WHERE (CAST(:since AS timestamptz) IS NULL OR s.created_at >= CAST(:since AS timestamptz))
  AND (CAST(:search AS text) IS NULL
       OR s.title ILIKE CAST(:search AS text)
       OR s.goal ILIKE CAST(:search AS text)
       OR s.id::text LIKE lower(CAST(:search AS text)))
ORDER BY s.created_at DESC, s.id
LIMIT CAST(:limit AS integer)
