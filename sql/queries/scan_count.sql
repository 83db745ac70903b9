-- How many sessions a scan (or one hash partition of it: scan --shard) will cover.
-- DISTINCT: a `sessions` view may list a session twice, and the scan reviews it once.
SELECT count(DISTINCT picked.id) AS n FROM ({scan_session_ids}) picked
