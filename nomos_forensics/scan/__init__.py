"""Scan many sessions: stream and review them (stream), aggregate a summary (summary), present it
(present), and run partitions in parallel processes (parallel)."""

from .parallel import ScanJob, card_results, parallel_scan
from .present import summary_tables
from .stream import ScanFilters, count_sessions, settle_memory, stream_sessions
from .summary import TOP_K, Summary, ranked

__all__ = [
    "TOP_K", "ScanFilters", "ScanJob", "Summary", "card_results", "count_sessions", "parallel_scan",
    "ranked", "settle_memory", "stream_sessions", "summary_tables",
]
