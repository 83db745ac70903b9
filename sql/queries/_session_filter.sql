-- Fragment: the scan's session filters (NULL parameters mean "no filter").
(CAST(:since AS timestamptz) IS NULL OR s.created_at >= CAST(:since AS timestamptz))
AND (CAST(:until AS timestamptz) IS NULL OR s.created_at < CAST(:until AS timestamptz))
AND (CAST(:status AS text) IS NULL OR s.status = CAST(:status AS text))
AND (CAST(:model AS text) IS NULL OR s.model = CAST(:model AS text))
