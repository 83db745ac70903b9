"""Estimation helpers: how much of the messages table to sample, the planner's row estimate,
percentiles and the TOAST chunk size."""

from __future__ import annotations

import math
from typing import Any

# The sample aims at this many rows and never fewer blocks than MIN_SAMPLE_BLOCKS: the spread of
# the estimates depends on how many blocks are read, not only on how many rows.
TARGET_SAMPLE_ROWS = 20_000
MIN_SAMPLE_BLOCKS = 64
ROWS_PER_BLOCK_GUESS = 30  # only for a table never vacuumed or analyzed
FALLBACK_SAMPLE_PERCENT = 1.0  # when the table's size could not be read
PERCENTILES = (("p50", 0.50), ("p95", 0.95), ("p99", 0.99))


def choose_sample_percent(
    reltuples: float | None,
    relpages: int | None,
    heap_blocks: int | None,
    *,
    target_rows: int = TARGET_SAMPLE_ROWS,
    min_blocks: int = MIN_SAMPLE_BLOCKS,
) -> float:
    """Percent of blocks to sample: about `target_rows` rows, at least `min_blocks` blocks."""
    blocks = heap_blocks if heap_blocks is not None else relpages
    if blocks is None or (heap_blocks is None and blocks <= 0):
        return FALLBACK_SAMPLE_PERCENT  # size unknown: never risk reading the whole table
    if blocks <= 0:
        return 100.0  # empty: nothing to read either way
    if reltuples and reltuples > 0 and relpages and relpages > 0:
        rows_per_block = reltuples / relpages
    else:
        rows_per_block = ROWS_PER_BLOCK_GUESS
    estimated_rows = max(1.0, rows_per_block * blocks)
    percent = max(100.0 * target_rows / estimated_rows, 100.0 * min_blocks / blocks)
    return round(min(100.0, percent), 4)


def row_estimate(reltuples: float | None, relpages: int | None, blocks: int | None) -> float | None:
    """The planner's row estimate: density at the last VACUUM/ANALYZE times the current size."""
    if reltuples is None or reltuples < 0:
        return None
    if blocks is not None and relpages and relpages > 0:
        return reltuples / relpages * blocks
    return float(reltuples)


def percentile(sorted_values: Any, fraction: float) -> int | None:
    """Nearest-rank percentile (what percentile_disc returns)."""
    n = len(sorted_values)
    if n == 0:
        return None
    return int(sorted_values[max(0, math.ceil(fraction * n) - 1)])


def toast_chunk_size(block_size: int) -> int:
    """TOAST_MAX_CHUNK_SIZE: data bytes per TOAST chunk (1996 with 8 kB blocks)."""
    tuple_max = ((block_size - 40) // 4) // 8 * 8  # four chunk tuples per page, MAXALIGNed down
    return tuple_max - 24 - 4 - 4 - 4  # tuple header, chunk_id, chunk_seq, varlena header


def percentiles(values: Any, source: str) -> dict[str, Any]:
    out: dict[str, Any] = {name: percentile(values, q) for name, q in PERCENTILES}
    out["max"] = int(values[-1]) if len(values) else None
    out["source"] = source
    return out
