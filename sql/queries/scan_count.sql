-- How many sessions a scan (or one hash partition of it: scan --shard) will cover.
SELECT count(*) AS n FROM ({scan_session_ids}) picked
