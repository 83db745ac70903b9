"""Message-content figures: one pass over a block sample of messages (or every row, with
`exact`) gives counts and bytes, percentiles, the share over the oversized-message limit, bytes
by role and tool, and what truncating tool outputs would save."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa

from ..schema import SchemaReport
from .catalog import CatalogFigures
from .estimate import choose_sample_percent, percentiles, row_estimate, toast_chunk_size
from .figures import ESTIMATE, EXACT, FIGURE_ERRORS, SAMPLE, Runner, rounded, share_of, unavailable
from .largest import largest_messages
from .options import SizesOptions
from .tally import OUT_OF_LINE, ContentTally, Group, Scale

MESSAGE_COLUMNS = ("id", "session_id", "role", "content")
# A heap tuple is toasted down to toast_tuple_target (default 2032 bytes); the tuple header and
# the other messages columns take about 72 of them, so a content stored larger than the rest went
# out of line. Exact only on PostgreSQL 17+ (pg_column_toast_chunk_id).
DEFAULT_TOAST_TUPLE_TARGET = 2032
OTHER_COLUMNS_BYTES = 72


class ContentFigures:
    """The messages section of the report; keeps the tally for the largest sessions."""

    def __init__(self, runner: Runner, schema: SchemaReport, options: SizesOptions,
                 catalog: CatalogFigures) -> None:
        self.sql = runner
        self.schema = schema
        self.options = options
        self.cat = catalog
        self.tally: ContentTally | None = None

    def _inline_max(self) -> int:
        cat = self.cat.catalog.get("messages")
        target = DEFAULT_TOAST_TUPLE_TARGET
        if cat is not None and cat.toast_tuple_target:
            try:
                target = int(cat.toast_tuple_target)
            except ValueError:
                pass
        return target - OTHER_COLUMNS_BYTES

    def _sample_percent(self) -> float:
        if self.options.exact:
            return 100.0
        if self.options.sample_percent is not None:
            return float(self.options.sample_percent)
        cat = self.cat.catalog.get("messages")
        heap_blocks = self.cat.table_sizes.get("messages", {}).get("heap_blocks")
        return choose_sample_percent(cat.reltuples if cat else None,
                                     cat.relpages if cat else None, heap_blocks)

    def messages(self) -> dict[str, Any]:
        reasons = self.schema.unmet({"messages": MESSAGE_COLUMNS})
        if reasons:
            return unavailable("; ".join(reasons))
        opts = self.options
        percent = self._sample_percent()
        complete = opts.exact or percent >= 100.0  # a 100% sample reads every row: exact figures
        source = EXACT if complete else SAMPLE
        derived = EXACT if complete else ESTIMATE
        tally = ContentTally(opts.limit.bytes, opts.truncate_bytes, opts.top, self._inline_max(),
                             toast_chunk_size(self.cat.block_size))

        def consume(rows: Iterable[sa.Row]) -> ContentTally:
            fresh = ContentTally(tally.limit_bytes, tally.truncate_bytes, tally.top_n,
                                 tally.inline_max, tally.chunk_size)
            for row in rows:
                fresh.add(row)
            return fresh

        purpose = ("scanning every message" if opts.exact
                   else f"sampling {percent:g}% of the messages blocks")
        try:
            # a full scan is not retried after a recovery conflict: it would only conflict again
            tally = self.sql.stream("sizes_message_rows", {"percent": percent, "seed": opts.seed},
                                    purpose, consume, retry=not opts.exact)
        except FIGURE_ERRORS as error:
            return {**unavailable(error), "source": source}
        self.tally = tally
        total_rows, rows_source, scale, estimator = self._scale(tally, percent, complete)
        n = tally.rows
        sizes = self.cat.table_sizes.get("messages", {})
        scan = {
            "percent": percent,
            "seed": None if opts.exact else opts.seed,
            "rows_read": n,
            "heap_blocks_with_rows": len(tally.blocks),
            "heap_blocks": sizes.get("heap_blocks"),
            "toast_bytes_read": tally.all.disk[OUT_OF_LINE],
            "toast_bytes_read_source": ESTIMATE,
            "toast_bytes": sizes.get("toast_bytes"),
            **estimator,
        }
        logical_total = scale.bytes(tally.all.logical)
        share = sum(tally.over.count) / n if n else 0.0
        over = {
            "limit_bytes": opts.limit.bytes,
            "in_scan": sum(tally.over.count),
            "share": round(share, 6),
            "share_source": source,
            "count": rounded(share * total_rows),
            "count_source": derived,
            "logical_bytes": scale.bytes(tally.over.logical),
            "disk_bytes": scale.bytes(tally.over.disk),
            "bytes_source": derived,
            "logical_share": share_of(scale.bytes(tally.over.logical), logical_total),
        }
        if not complete and n:
            over["share_margin_95"] = round(1.96 * math.sqrt(share * (1 - share) / n), 6)
        cut = tally.truncation
        return {
            "available": True,
            "source": source,
            "scan": scan,
            "messages": rounded(total_rows),
            "messages_source": rows_source,
            "logical_bytes": logical_total,
            "disk_bytes": scale.bytes(tally.all.disk),
            "bytes_source": derived,
            "disk_percentiles": percentiles(sorted(tally.disk), source),
            "logical_percentiles": percentiles(sorted(tally.logical), source),
            "over_limit": over,
            "top": largest_messages(self.sql, tally, source, complete, self.cat.node_info),
            "by_role": self._groups(tally.roles, scale, logical_total, derived, key="role"),
            "by_tool": self._groups(tally.tools, scale, logical_total, derived, key="tool"),
            "truncation": {
                "truncate_at_kb": opts.truncate_at_kb,
                "outputs_truncated": scale.count(cut.truncated),
                "logical_bytes_saved": scale.bytes(cut.saved_logical),
                "logical_source": derived,
                "disk_bytes_saved": scale.bytes(cut.saved_disk),
                "disk_source": ESTIMATE,
                "assumes": "each output cut to truncate_at_kb; on disk, each message keeps its "
                           "compression ratio",
            },
        }

    def _scale(self, tally: ContentTally, percent: float,
               complete: bool) -> tuple[float, str, Scale, dict[str, Any]]:
        """Messages in the table, its source, the Scale for the sums, and how it was chosen."""
        if complete:
            return float(tally.rows), EXACT, Scale(), {"estimator": "every row"}
        cat = self.cat.catalog.get("messages")
        sizes = self.cat.table_sizes.get("messages", {})
        planner = row_estimate(cat.reltuples, cat.relpages, sizes.get("heap_blocks")) if cat else None
        if planner and planner > 0:
            total_rows = planner
        else:  # never analyzed: what the sample found, scaled up
            total_rows = tally.rows / (percent / 100.0) if percent > 0 else float(tally.rows)
        toast_chunks = None
        if cat is not None and sizes.get("toast_heap_bytes") is not None:
            toast_chunks = row_estimate(cat.toast_reltuples, cat.toast_relpages,
                                        sizes["toast_heap_bytes"] // self.cat.block_size)
        scale, estimator = tally.scale(total_rows, toast_chunks)
        return total_rows, ESTIMATE, scale, estimator

    def _groups(self, groups: dict[str, Group], scale: Scale, logical_total: int, source: str,
                *, key: str) -> dict[str, Any]:
        rows = []
        for name, g in groups.items():
            logical = scale.bytes(g.logical)
            row = {
                key: name,
                "messages" if key == "role" else "results": scale.count(g.count),
                "logical_bytes": logical,
                "logical_share": share_of(logical, logical_total),
                "disk_bytes": scale.bytes(g.disk),
            }
            if key == "tool":
                row["truncated"] = scale.count(g.truncated)
                row["logical_bytes_saved"] = scale.bytes(g.saved_logical)
                row["disk_bytes_saved"] = scale.bytes(g.saved_disk)
            rows.append(row)
        rows.sort(key=lambda r: (-r["logical_bytes"], r[key]))
        out: dict[str, Any] = {"source": source, "rows": rows}
        if key == "tool":
            out["counts"] = "tool-role messages, and legacy tool_results inside assistant messages"
        return out

