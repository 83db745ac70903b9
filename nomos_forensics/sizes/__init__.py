"""Where a Nomos database's bytes are, safely on a production replica: catalog sizes first, a
block sample of message contents second, full scans only with `exact`.

`measure` runs each figure as its own statement in its own short read-only transaction; a
figure whose statement times out, cannot take its lock or fails is reported as not available
with the reason, and the others still come. Every figure names its source: catalog (the
server's catalog, size functions and statistics), estimate (scaled up or derived), sample
(measured on the sampled rows) or exact (measured on every row).

The package, by step: options (the limit and settings), figures (running each figure, sources),
catalog (server, database, tables, vacuum, indexes), estimate and tally (the block sample and
its scaling), contents (message figures), largest (largest messages and sessions), measure (the
report in order), and render, render_messages and writer (the table, markdown and json output).
"""

from __future__ import annotations

from .contents import DEFAULT_TOAST_TUPLE_TARGET, OTHER_COLUMNS_BYTES
from .estimate import (
    FALLBACK_SAMPLE_PERCENT,
    TARGET_SAMPLE_ROWS,
    choose_sample_percent,
    percentile,
    row_estimate,
    toast_chunk_size,
)
from .figures import CATALOG, ESTIMATE, EXACT, SAMPLE, SCHEMA_VERSION
from .measure import measure
from .options import (
    DEFAULT_LIMIT_KB,
    DEFAULT_SEED,
    DEFAULT_TOP,
    DEFAULT_TRUNCATE_AT_KB,
    Limit,
    SizesOptions,
    oversized_limit,
)
from .render import render

__all__ = [
    "CATALOG", "DEFAULT_LIMIT_KB", "DEFAULT_SEED", "DEFAULT_TOAST_TUPLE_TARGET", "DEFAULT_TOP",
    "DEFAULT_TRUNCATE_AT_KB", "ESTIMATE", "EXACT", "FALLBACK_SAMPLE_PERCENT", "OTHER_COLUMNS_BYTES",
    "SAMPLE", "SCHEMA_VERSION", "TARGET_SAMPLE_ROWS", "Limit", "SizesOptions", "choose_sample_percent",
    "measure", "oversized_limit", "percentile", "render", "row_estimate", "toast_chunk_size",
]
