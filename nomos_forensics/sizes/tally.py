"""The message tally: one pass over the rows of sizes_message_rows (a block sample or every row)
sums counts and bytes by role, tool and session, keeps the largest messages, and knows how to
scale the sums of a sample up to table totals."""

from __future__ import annotations

import heapq
from array import array
from dataclasses import dataclass, field
from typing import Any

INLINE, OUT_OF_LINE = 0, 1


def _pair() -> list:
    return [0, 0]


@dataclass
class Group:
    """Sums over messages (or tool results), kept apart for inline and out-of-line contents."""

    count: list = field(default_factory=_pair)
    logical: list = field(default_factory=_pair)
    disk: list = field(default_factory=_pair)
    saved_logical: list = field(default_factory=_pair)
    saved_disk: list = field(default_factory=_pair)
    truncated: list = field(default_factory=_pair)

    def add(self, stratum: int, logical: int, disk: float) -> None:
        self.count[stratum] += 1
        self.logical[stratum] += logical
        self.disk[stratum] += disk

    def save(self, stratum: int, logical: int, disk: float) -> None:
        self.truncated[stratum] += 1
        self.saved_logical[stratum] += logical
        self.saved_disk[stratum] += disk


@dataclass(frozen=True)
class Scale:
    """How sums over the scanned rows become table totals.

    Counts scale by messages per scanned message, and so do bytes of inline contents. Bytes of
    out-of-line contents scale by the table's out-of-line on-disk bytes (anchored on the TOAST
    chunks the catalog counts) per out-of-line on-disk byte scanned: the few huge values that
    hold most of the bytes are then weighed by what the TOAST table holds, not by how many of
    them the sample happened to catch.
    """

    rows: float = 1.0
    out_of_line: float = 1.0

    def count(self, pair: list) -> int:
        return int(round((pair[INLINE] + pair[OUT_OF_LINE]) * self.rows))

    def bytes(self, pair: list) -> int:
        return int(round(pair[INLINE] * self.rows + pair[OUT_OF_LINE] * self.out_of_line))


@dataclass
class ContentTally:
    """Aggregates the rows of sizes_message_rows (a sample or every row) in one pass."""

    limit_bytes: int
    truncate_bytes: int
    top_n: int
    inline_max: int
    chunk_size: int = 1996
    rows: int = 0
    chunk_slack: int = 0  # unused bytes in the last TOAST chunk of each out-of-line content
    disk: array = field(default_factory=lambda: array("q"))
    logical: array = field(default_factory=lambda: array("q"))
    blocks: set = field(default_factory=set)
    all: Group = field(default_factory=Group)
    over: Group = field(default_factory=Group)
    roles: dict = field(default_factory=dict)
    tools: dict = field(default_factory=dict)
    truncation: Group = field(default_factory=Group)
    sessions: dict = field(default_factory=dict)  # session id -> [messages, disk, logical]
    _top: list = field(default_factory=list)  # min-heap of (logical, id, session, role, tool, disk)

    def add(self, row: Any) -> None:
        """One row of sizes_message_rows, unpacked by position."""
        message_id, session_id, role, block, disk, logical, tool_name, rest_bytes, results = row
        disk = disk or 0
        logical = logical or 0
        role = role or "(none)"
        stratum = OUT_OF_LINE if disk > self.inline_max else INLINE
        self.rows += 1
        self.disk.append(disk)
        self.logical.append(logical)
        self.blocks.add(block)
        if stratum == OUT_OF_LINE:
            self.chunk_slack += -disk % self.chunk_size
        self.all.add(stratum, logical, disk)
        group = self.roles.get(role)
        if group is None:
            group = self.roles[role] = Group()
        group.add(stratum, logical, disk)
        session = self.sessions.get(session_id)
        if session is None:
            session = self.sessions[session_id] = [0, 0, 0]
        session[0] += 1
        session[1] += disk
        session[2] += logical
        if logical > self.limit_bytes:
            self.over.add(stratum, logical, disk)
            item = (logical, message_id, session_id, role, tool_name if role == "tool" else None, disk)
            if len(self._top) < self.top_n:
                heapq.heappush(self._top, item)
            elif item[:2] > self._top[0][:2]:
                heapq.heapreplace(self._top, item)
        if role == "tool":
            output = logical - with_output(rest_bytes, 0) if rest_bytes is not None else None
            self._tool(stratum, tool_name, logical, disk, output)
        if results is not None:
            for name, result_bytes, output in legacy_results(results):
                share = result_bytes / logical if logical else 0.0
                self._tool(stratum, name, result_bytes, disk * share, output)

    def _tool(self, stratum: int, name: str | None, logical: int, disk: float,
              output: int | None) -> None:
        name = name or "(unnamed)"
        group = self.tools.get(name)
        if group is None:
            group = self.tools[name] = Group()
        group.add(stratum, logical, disk)
        if output is not None and output > self.truncate_bytes and logical > 0:
            saved = output - self.truncate_bytes
            saved_disk = disk * saved / logical  # assumes the compression ratio stays the same
            group.save(stratum, saved, saved_disk)
            self.truncation.save(stratum, saved, saved_disk)

    def scale(self, total_rows: float, toast_chunks: float | None) -> tuple[Scale, dict[str, Any]]:
        """The Scale that turns this sample into totals, and how it was chosen (for the report)."""
        rows = total_rows / self.rows if self.rows else 0.0
        scanned = self.all.disk[OUT_OF_LINE]
        scaled = scanned * rows
        how: dict[str, Any] = {"out_of_line_disk_bytes_scaled": int(round(scaled))}
        if toast_chunks and toast_chunks > 0 and scanned > 0:
            # every chunk is full but each value's last: chunks x chunk size - the last chunks' slack
            anchored = max(0.0, toast_chunks * self.chunk_size - self.chunk_slack * rows)
            how.update(estimator="toast-anchored", out_of_line_disk_bytes=int(round(anchored)),
                       toast_chunks=int(round(toast_chunks)))
            return Scale(rows, anchored / scanned), how
        how.update(estimator="scaled sample", out_of_line_disk_bytes=int(round(scaled)))
        return Scale(rows, rows), how

    def top(self) -> list[dict[str, Any]]:
        return [
            {"id": int(message_id), "session_id": session_id, "role": role, "tool": tool,
             "logical_bytes": logical, "disk_bytes": disk}
            for logical, message_id, session_id, role, tool, disk
            in sorted(self._top, key=lambda t: (-t[0], t[1]))
        ]

    def top_sessions(self, n: int) -> list[tuple[str, list[int]]]:
        return sorted(self.sessions.items(), key=lambda kv: (-kv[1][1], kv[0]))[:n]


def legacy_results(value: Any) -> list[tuple[str | None, int, int | None]]:
    """(name, bytes as text, output bytes as text) of each legacy tool_results element."""
    if not isinstance(value, list):
        return []
    out = []
    for item in value:
        if isinstance(item, list) and len(item) == 3:
            name, rest, output = item
            rest = int(rest or 0)
            size = rest if output is None else with_output(rest, int(output))
            out.append((name if isinstance(name, str) else None, size,
                        int(output) if output is not None else None))
    return out


def with_output(rest: int, output: int) -> int:
    """Text size of an object from its size without "output": plus `"output": ` and `, `."""
    return rest + output + (10 if rest <= 2 else 12)
