-- Fragment: m.content as jsonb, whatever its column type. A jsonb column is used as it is; a
-- json column (tolerated, older Nomos) is cast, except that the escapes jsonb refuses (\u0000
-- and lone UTF-16 surrogates) become U+FFFD first, so one such row cannot fail a whole query.
-- Only rows holding such an escape pay for the regular expressions.
(CASE WHEN pg_typeof(m.content) = 'jsonb'::regtype OR m.content::text !~ '\\u(0000|[dD][89a-fA-F])'
      THEN m.content::jsonb
      ELSE regexp_replace(m.content::text,
                          '\\u0000|\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})'
                          '|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}',
                          '\\ufffd', 'g')::jsonb END)
