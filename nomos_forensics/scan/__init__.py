"""Scan many sessions: stream and review them (stream), aggregate a summary (summary), present it
(present), run partitions in parallel processes (parallel), and split a scan into shard files
and merge them back (shard)."""

from .parallel import MAX_JOBS, ScanJob, auto_jobs, card_results, parallel_scan
from .present import summary_tables
from .shard import MergedShards, ShardError, ShardRecorder, parse_shard, read_shards, scan_settings
from .stream import ScanFilters, Span, count_sessions, describe_filters, session_span, settle_memory, stream_sessions
from .summary import TOP_K, Summary, ranked

__all__ = [
    "MAX_JOBS", "TOP_K", "MergedShards", "ScanFilters", "ScanJob", "ShardError", "ShardRecorder", "Span", "Summary",
    "auto_jobs", "card_results", "count_sessions", "describe_filters", "parallel_scan", "parse_shard", "ranked", "read_shards",
    "scan_settings", "session_span", "settle_memory", "stream_sessions", "summary_tables",
]
