"""Where a Nomos database's bytes are, safely on a production replica: catalog sizes first, a
block sample of message contents second, full scans only with `exact`.

`measure` runs each figure as its own statement in its own short read-only transaction; a
figure whose statement times out, cannot take its lock or fails is reported as not available
with the reason, and the others still come. Every figure names its source: catalog (the
server's catalog, size functions and statistics), estimate (scaled up or derived), sample
(measured on the sampled rows) or exact (measured on every row).
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from .config import Config
from .db import Database, load_query, retry_on_standby_conflict
from .errors import ConfigError, QueryFailed, SchemaMismatch
from .render import Format, human_bytes, table, to_json
from .schema import CONTRACT, SchemaReport

SCHEMA_VERSION = 1
CATALOG, ESTIMATE, SAMPLE, EXACT = "catalog", "estimate", "sample", "exact"

OVERSIZED_RULE = "oversized-message"
DEFAULT_LIMIT_KB = 50.0
DEFAULT_TRUNCATE_AT_KB = 16.0
DEFAULT_TOP = 10
DEFAULT_SEED = 1
# The sample aims at this many rows and never fewer blocks than MIN_SAMPLE_BLOCKS: the spread of
# the estimates depends on how many blocks are read, not only on how many rows.
TARGET_SAMPLE_ROWS = 20_000
MIN_SAMPLE_BLOCKS = 64
ROWS_PER_BLOCK_GUESS = 30  # only for a table never vacuumed or analyzed
FALLBACK_SAMPLE_PERCENT = 1.0  # when the table's size could not be read
FETCH_ROWS = 5_000
SESSION_CANDIDATES = 3  # sessions measured exactly per session listed, when ranked from a sample
PERCENTILES = (("p50", 0.50), ("p95", 0.95), ("p99", 0.99))
# A heap tuple is toasted down to toast_tuple_target (default 2032 bytes); the tuple header and
# the other messages columns take about 72 of them, so a content stored larger than the rest went
# out of line. Exact only on PostgreSQL 17+ (pg_column_toast_chunk_id).
DEFAULT_TOAST_TUPLE_TARGET = 2032
OTHER_COLUMNS_BYTES = 72
PG17 = 170000

# Failures that cost one figure; anything else (a lost connection, a bug) stops the command.
FIGURE_ERRORS = (QueryFailed, SchemaMismatch)

MESSAGE_COLUMNS = ("id", "session_id", "role", "content")
KEY_LABELS = {
    "text": "text",
    "output": "tool output",
    "tool_results": "tool output (legacy tool_results)",
    "tool_calls": "tool_calls",
    "error": "error",
}


# ------------------------------------------------------------------ options
@dataclass(frozen=True)
class Limit:
    """The oversized-message limit: more than `kb` KiB of JSON text (octet_length(content::text))."""

    kb: float
    origin: str  # "--limit-kb", "config <path>", "rule default"

    @property
    def bytes(self) -> int:
        return int(self.kb * 1024)


@dataclass(frozen=True)
class SizesOptions:
    limit: Limit = Limit(DEFAULT_LIMIT_KB, "rule default")
    exact: bool = False
    truncate_at_kb: float = DEFAULT_TRUNCATE_AT_KB
    top: int = DEFAULT_TOP
    sample_percent: float | None = None  # None: chosen from the table's size
    seed: int = DEFAULT_SEED

    @property
    def truncate_bytes(self) -> int:
        return int(self.truncate_at_kb * 1024)


def oversized_limit(config: Config, override_kb: float | None = None) -> Limit:
    """The limit the oversized-message rule applies: --limit-kb, else its max_kb option, else its default.

    The rule is found through the plugin registry and built from the config exactly as `review`
    builds it, so both commands call the same message oversized.
    """
    if override_kb is not None:
        return Limit(float(override_kb), "--limit-kb")
    from . import plugins

    spec = next((s for s in plugins.load().rules if s.name == OVERSIZED_RULE), None)
    options = config.options_for(OVERSIZED_RULE, spec.code if spec else OVERSIZED_RULE)
    where = f"{config.source or 'config'}: rules.{OVERSIZED_RULE}.max_kb"
    try:
        value = spec.cls(options).options["max_kb"] if spec else options.get("max_kb", DEFAULT_LIMIT_KB)
        kb = float(value)
    except ValueError as error:
        raise ConfigError(f"{where}: {error}") from None
    except TypeError:
        raise ConfigError(f"{where} must be a number of KiB") from None
    if not kb > 0:
        raise ConfigError(f"{where} must be positive")
    return Limit(kb, f"config {config.source}" if "max_kb" in options else "rule default")


# ------------------------------------------------------------------ estimation helpers
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


# ------------------------------------------------------------------ message tally
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


# ------------------------------------------------------------------ running figures
class Runner:
    """Runs one figure's statement in its own read-only transaction on a shared connection."""

    def __init__(self, db: Database, conn: sa.Connection) -> None:
        self.db = db
        self.conn = conn

    def rows(self, name: str, params: Mapping[str, Any] | None, purpose: str) -> list[sa.Row]:
        try:
            return self.db.query(self.conn, name, params or {}, purpose=purpose)
        finally:
            self._end()

    def stream(self, name: str, params: Mapping[str, Any], purpose: str,
               consume: Callable[[Iterable[sa.Row]], Any], *, retry: bool = True) -> Any:
        """Consume a query through a server-side cursor; every FETCH is a statement under the timeouts."""
        statement = sa.text(load_query(name))

        def attempt() -> Any:
            with self.db.translate_errors(purpose):
                try:
                    result = self.conn.execute(statement, dict(params),
                                               execution_options={"yield_per": FETCH_ROWS})
                    return consume(result)
                finally:
                    self._end()

        return retry_on_standby_conflict(attempt) if retry else attempt()

    def _end(self) -> None:
        try:
            self.conn.rollback()  # read-only: ending the transaction is all a rollback does
        except Exception:  # a dead connection cannot roll back; the figure's error says why
            pass


def unavailable(reason: Any) -> dict[str, Any]:
    return {"available": False, "reason": str(reason)}


# ------------------------------------------------------------------ measuring
def measure(db: Database, conn: sa.Connection, schema: SchemaReport,
            options: SizesOptions) -> dict[str, Any]:
    """Every figure of the `sizes` report, as a JSON-ready dict (schema_version 1)."""
    return _Measure(Runner(db, conn), schema, options, target=db.settings.describe()).run()


class _Measure:
    def __init__(self, runner: Runner, schema: SchemaReport, options: SizesOptions,
                 target: str) -> None:
        self.sql = runner
        self.schema = schema
        self.options = options
        self.tables = list(CONTRACT)
        self.notes: list[str] = []
        self.node: dict[str, Any] = {}
        self.catalog: dict[str, Any] = {}  # table name -> sizes_tables row
        self.table_sizes: dict[str, dict[str, int]] = {}
        self.tally: ContentTally | None = None
        self.report: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "target": target,
            "mode": EXACT if options.exact else SAMPLE,
            "settings": {
                "limit_kb": options.limit.kb,
                "limit_bytes": options.limit.bytes,
                "limit_compares": "logical bytes: octet_length(content::text)",
                "limit_origin": options.limit.origin,
                "truncate_at_kb": options.truncate_at_kb,
                "top": options.top,
                "exact": options.exact,
            },
        }

    def run(self) -> dict[str, Any]:
        r = self.report
        r["node"] = self._node()
        r["database"] = self._database()
        r["tables"] = self._tables()
        r["messages"] = self._messages()
        r["sessions"] = self._sessions(r["messages"])
        r["maintenance"] = self._maintenance()
        r["indexes"] = self._indexes()
        r["notes"] = self.notes
        return r

    @property
    def block_size(self) -> int:
        return self.node.get("block_size", 8192)

    # -------------------------------------------------------------- catalog figures
    def _node(self) -> dict[str, Any]:
        try:
            row = self.sql.rows("sizes_node", None, "identifying the server")[0]
        except FIGURE_ERRORS as error:
            return unavailable(error)
        self.node = {
            "available": True,
            "source": CATALOG,
            "database": row.database,
            "role": "standby" if row.standby else "primary",
            "standby": bool(row.standby),
            "address": f"{row.address}:{row.port}" if row.address else "local socket",
            "server_version": row.server_version,
            "server_version_num": int(row.server_version_num),
            "block_size": int(row.block_size),
            "stats_reset": _iso(row.stats_reset),
        }
        return self.node

    def _node_label(self) -> str:
        if not self.node.get("available"):
            return "unknown node"
        return f"{self.node['role']} {self.node['address']}"

    def _database(self) -> dict[str, Any]:
        try:
            row = self.sql.rows("sizes_database", None, "measuring the database size")[0]
        except FIGURE_ERRORS as error:
            return unavailable(error)
        return {"available": True, "source": CATALOG, "name": row.database, "bytes": int(row.bytes)}

    def _tables(self) -> dict[str, Any]:
        migration = self.schema.migration
        for name in self.schema.missing_tables:
            at = f" (database at migration {migration:03d})" if migration is not None else ""
            self.notes.append(f"table {name} is missing{at}; skipped")
        try:
            rows = self.sql.rows("sizes_tables", {"tables": self.tables}, "listing the Nomos tables")
        except FIGURE_ERRORS as error:
            return unavailable(error)
        self.catalog = {row.table_name: row for row in rows}
        for name in sorted(set(self.schema.columns) - set(self.catalog)):
            self.notes.append(f"{name} is not a table (a view or foreign table); no sizes")
        return {"available": True, "source": CATALOG,
                "rows": [self._table(name, cat) for name, cat in self.catalog.items()]}

    def _table(self, name: str, cat: Any) -> dict[str, Any]:
        entry: dict[str, Any] = {"table": name}
        try:
            size = self.sql.rows("sizes_table_size", {"oid": cat.oid, "toast_oid": cat.toast_oid},
                                 f"measuring table {name}")[0]
        except FIGURE_ERRORS as error:
            return {**entry, **unavailable(error),
                    "row_estimate": _round(row_estimate(cat.reltuples, cat.relpages, None)),
                    "row_estimate_source": ESTIMATE}
        if size.total_bytes is None:  # dropped while we looked
            return {**entry, **unavailable("the table disappeared while it was measured")}
        sizes = {
            "heap_bytes": int(size.heap_bytes),
            "toast_bytes": int(size.toast_bytes),
            "table_bytes": int(size.table_bytes),
            "index_bytes": int(size.index_bytes),
            "total_bytes": int(size.total_bytes),
        }
        heap_blocks = sizes["heap_bytes"] // self.block_size
        self.table_sizes[name] = {**sizes, "heap_blocks": heap_blocks,
                                  "toast_heap_bytes": int(size.toast_heap_bytes)}
        rows = row_estimate(cat.reltuples, cat.relpages, heap_blocks)
        entry.update({
            "available": True,
            "source": CATALOG,
            **sizes,
            "heap_blocks": heap_blocks,
            "toast_exceeds_heap": 0 < sizes["heap_bytes"] < sizes["toast_bytes"],
            "row_estimate": _round(rows),
            "row_estimate_source": ESTIMATE,
            "bytes_per_row": _round(sizes["total_bytes"] / rows) if rows else None,
            "bytes_per_row_source": ESTIMATE,
        })
        if cat.relkind == "p":
            entry["note"] = "partitioned: its partitions hold the bytes"
        return entry

    def _maintenance(self) -> dict[str, Any]:
        if not self.node.get("available"):
            return unavailable("the server's role (primary or standby) is unknown")
        if self.node["standby"]:
            return {"available": False, "reason": "n/a on a standby", "node": self._node_label()}
        try:
            rows = self.sql.rows("sizes_maintenance", {"tables": self.tables},
                                 "reading vacuum statistics")
        except FIGURE_ERRORS as error:
            return unavailable(error)
        out = []
        for row in rows:
            live, dead = int(row.live_rows or 0), int(row.dead_rows or 0)
            out.append({
                "table": row.table_name,
                "live_rows": live,
                "dead_rows": dead,
                "dead_share": round(dead / (live + dead), 4) if live + dead else 0.0,
                "rows_source": ESTIMATE,
                "last_vacuum": _iso(row.last_vacuum),
                "last_autovacuum": _iso(row.last_autovacuum),
                "last_analyze": _iso(row.last_analyze),
                "last_autoanalyze": _iso(row.last_autoanalyze),
                "vacuum_source": CATALOG,
            })
        return {"available": True, "source": CATALOG, "node": self._node_label(), "rows": out}

    def _indexes(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "source": CATALOG,
            "node": self._node_label(),
            "counters_since": self.node.get("stats_reset"),
        }
        params = {"tables": self.tables}
        try:
            unused = self.sql.rows("sizes_unused_indexes", params, "looking for unused indexes")
            result["unused"] = {"available": True, "source": CATALOG, "rows": [
                {"table": r.table_name, "index": r.index_name, "scans": int(r.idx_scan),
                 "bytes": int(r.bytes or 0), "definition": r.definition} for r in unused]}
        except FIGURE_ERRORS as error:
            result["unused"] = unavailable(error)
        try:
            pairs = self.sql.rows("sizes_duplicate_indexes", params, "looking for duplicate indexes")
            first = {}
            for r in pairs:  # three copies of an index make two redundant ones, each listed once
                first.setdefault(r.index_name, {
                    "table": r.table_name, "index": r.index_name, "duplicate_of": r.duplicate_of,
                    "bytes": int(r.bytes or 0), "definition": r.definition})
            result["duplicate"] = {"available": True, "source": CATALOG, "rows": list(first.values())}
        except FIGURE_ERRORS as error:
            result["duplicate"] = unavailable(error)
        if self.node.get("standby"):
            self.notes.append("index scan counters are this standby's own: an index unused here "
                              "may serve the primary or another replica")
        return result

    # -------------------------------------------------------------- message contents
    def _inline_max(self) -> int:
        cat = self.catalog.get("messages")
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
        cat = self.catalog.get("messages")
        heap_blocks = self.table_sizes.get("messages", {}).get("heap_blocks")
        return choose_sample_percent(cat.reltuples if cat else None,
                                     cat.relpages if cat else None, heap_blocks)

    def _messages(self) -> dict[str, Any]:
        reasons = self.schema.unmet({"messages": MESSAGE_COLUMNS})
        if reasons:
            return unavailable("; ".join(reasons))
        opts = self.options
        percent = self._sample_percent()
        complete = opts.exact or percent >= 100.0  # a 100% sample reads every row: exact figures
        source = EXACT if complete else SAMPLE
        derived = EXACT if complete else ESTIMATE
        tally = ContentTally(opts.limit.bytes, opts.truncate_bytes, opts.top, self._inline_max(),
                             toast_chunk_size(self.block_size))

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
        sizes = self.table_sizes.get("messages", {})
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
            "count": _round(share * total_rows),
            "count_source": derived,
            "logical_bytes": scale.bytes(tally.over.logical),
            "disk_bytes": scale.bytes(tally.over.disk),
            "bytes_source": derived,
            "logical_share": _share(scale.bytes(tally.over.logical), logical_total),
        }
        if not complete and n:
            over["share_margin_95"] = round(1.96 * math.sqrt(share * (1 - share) / n), 6)
        cut = tally.truncation
        return {
            "available": True,
            "source": source,
            "scan": scan,
            "messages": _round(total_rows),
            "messages_source": rows_source,
            "logical_bytes": logical_total,
            "disk_bytes": scale.bytes(tally.all.disk),
            "bytes_source": derived,
            "disk_percentiles": _percentiles(sorted(tally.disk), source),
            "logical_percentiles": _percentiles(sorted(tally.logical), source),
            "over_limit": over,
            "top": self._top(tally, source, complete),
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
        cat = self.catalog.get("messages")
        sizes = self.table_sizes.get("messages", {})
        planner = row_estimate(cat.reltuples, cat.relpages, sizes.get("heap_blocks")) if cat else None
        if planner and planner > 0:
            total_rows = planner
        else:  # never analyzed: what the sample found, scaled up
            total_rows = tally.rows / (percent / 100.0) if percent > 0 else float(tally.rows)
        toast_chunks = None
        if cat is not None and sizes.get("toast_heap_bytes") is not None:
            toast_chunks = row_estimate(cat.toast_reltuples, cat.toast_relpages,
                                        sizes["toast_heap_bytes"] // self.block_size)
        scale, estimator = tally.scale(total_rows, toast_chunks)
        return total_rows, ESTIMATE, scale, estimator

    def _top(self, tally: ContentTally, source: str, complete: bool) -> dict[str, Any]:
        records = tally.top()
        out: dict[str, Any] = {"source": source, "rows": records}
        if not complete:
            out["note"] = "the largest messages in the sample; --exact finds the largest of all"
        for record in records:
            record["session_prefix"] = (record["session_id"] or "")[:8]
            record["out_of_line"] = record["disk_bytes"] > tally.inline_max
            record["out_of_line_source"] = "inferred from size"
            record["largest_key"] = None
        if not records:
            return out
        by_id = {r["id"]: r for r in records}
        try:
            for row in self.sql.rows("sizes_message_detail", {"ids": list(by_id)},
                                     "reading the largest messages"):
                record = by_id.get(int(row.id))
                if record is None:
                    continue
                record["largest_key"] = _key_label(row.kind, row.largest_key)
                record["largest_key_bytes"] = _round(row.largest_key_bytes)
                if not record["tool"]:
                    names = [n for n in (row.call_names or []) + (row.result_names or [])
                             if isinstance(n, str)]
                    record["tool"] = row.tool_name or ", ".join(dict.fromkeys(names)) or None
        except FIGURE_ERRORS as error:
            out["detail"] = unavailable(error)
        if self.node.get("server_version_num", 0) >= PG17:
            try:
                for row in self.sql.rows("sizes_message_toast_pg17", {"ids": list(by_id)},
                                         "checking where the largest messages are stored"):
                    if int(row.id) in by_id:
                        by_id[int(row.id)].update(out_of_line=bool(row.out_of_line),
                                                  out_of_line_source=EXACT)
            except FIGURE_ERRORS as error:
                out["storage"] = unavailable(error)
        return out

    def _groups(self, groups: dict[str, Group], scale: Scale, logical_total: int, source: str,
                *, key: str) -> dict[str, Any]:
        rows = []
        for name, g in groups.items():
            logical = scale.bytes(g.logical)
            row = {
                key: name,
                "messages" if key == "role" else "results": scale.count(g.count),
                "logical_bytes": logical,
                "logical_share": _share(logical, logical_total),
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

    def _sessions(self, messages: dict[str, Any]) -> dict[str, Any]:
        if not messages.get("available") or self.tally is None:
            return unavailable(f"needs the message figures: {messages.get('reason')}")
        reasons = self.schema.unmet({"sessions": ("id", "title"), "messages": ("session_id",)})
        if reasons:
            return unavailable("; ".join(reasons))
        top = self.options.top
        complete = messages["source"] == EXACT
        candidates = self.tally.top_sessions(top if complete else top * SESSION_CANDIDATES)
        if not candidates:
            return {"available": True, "source": messages["source"], "rows": []}
        text_ids = self.schema.column_type("sessions", "id") in ("text", "character varying")
        try:
            rows = self.sql.rows("sizes_session_bytes_text" if text_ids else "sizes_session_bytes",
                                 {"ids": [sid for sid, _ in candidates]},
                                 "measuring the largest sessions")
        except FIGURE_ERRORS as error:
            return unavailable(error)
        scanned = dict(candidates)
        out = []
        for row in sorted(rows, key=lambda r: (-int(r.disk_bytes), r.session_id))[:top]:
            entry = {
                "session_id": row.session_id,
                "session_prefix": row.session_id[:8],
                "title": row.title,
                "messages": int(row.messages),
                "disk_bytes": int(row.disk_bytes),
                "disk_source": EXACT,
            }
            if complete and row.session_id in scanned:
                entry.update(logical_bytes=scanned[row.session_id][2], logical_source=EXACT)
            out.append(entry)
        result: dict[str, Any] = {"available": True, "source": messages["source"], "rows": out}
        if not complete:
            result["note"] = ("candidates are the sessions with the most bytes in the sample; "
                              "each listed session's stored bytes are exact")
        return result


def _percentiles(values: Any, source: str) -> dict[str, Any]:
    out: dict[str, Any] = {name: percentile(values, q) for name, q in PERCENTILES}
    out["max"] = int(values[-1]) if len(values) else None
    out["source"] = source
    return out


def _share(part: float, whole: float) -> float:
    return round(part / whole, 6) if whole else 0.0


def _key_label(kind: str | None, key: str | None) -> str:
    if kind != "object":
        return f"whole value ({kind or 'null'})"
    if key is None:
        return "(empty object)"
    return KEY_LABELS.get(key, f"key {key!r}")


def _round(value: float | None) -> int | None:
    return None if value is None else int(round(value))


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


# ------------------------------------------------------------------ rendering
def render(report: dict[str, Any], fmt: Format) -> str:
    """The report for people (table, markdown) or scripts (json). Formats only; decides nothing."""
    if fmt == Format.JSON:
        return to_json(report)
    return _Text(report, fmt).render()


class _Text:
    def __init__(self, report: dict[str, Any], fmt: Format) -> None:
        self.r = report
        self.fmt = fmt
        self.md = fmt == Format.MARKDOWN
        self.out: list[str] = []
        self.unavailable: list[str] = []

    # -------------------------------------------------------------- primitives
    def heading(self, text: str, source: str | None = None) -> None:
        tag = f" [{source}]" if source else ""
        self.out += ["", f"### {text}{tag}", ""] if self.md else ["", f"{text}{tag}"]

    def line(self, text: str) -> None:
        self.out.append(f"- {text}" if self.md else f"  {text}")

    def grid(self, rows: list[list[Any]], headers: list[str]) -> None:
        if self.md:
            rows = [[str(c).replace("|", "\\|").replace("\n", " ") for c in row] for row in rows]
        text = table(rows, headers, self.fmt)
        if self.md:  # a markdown table needs blank lines around it
            self.out += ["", *text.splitlines(), ""]
        else:
            self.out += ["  " + line for line in text.splitlines()]

    def missing(self, what: str, section: dict[str, Any]) -> bool:
        if section.get("available", True):
            return False
        self.line(f"{what}: not available ({section.get('reason')})")
        self.unavailable.append(what)
        return True

    # -------------------------------------------------------------- sections
    def render(self) -> str:
        r = self.r
        node = r.get("node", {})
        where = f"{node['role']}, {node['address']}" if node.get("available") else "node unknown"
        mode = "exact full scans" if r["mode"] == EXACT else "catalog and a block sample"
        title = f"Sizes of {r['target']} ({where}; {mode})"
        self.out.append(f"## {title}" if self.md else title)
        self._database()
        self._tables()
        self._messages()
        self._sessions()
        self._maintenance()
        self._indexes()
        if r.get("notes"):
            self.heading("Notes")
            for note in r["notes"]:
                self.line(note)
        if self.unavailable:
            self.heading("Not available")
            self.line(", ".join(self.unavailable) + " (reasons above; everything else is complete)")
        text = "\n".join(self.out).lstrip("\n")
        while "\n\n\n" in text:
            text = text.replace("\n\n\n", "\n\n")
        return text

    def _database(self) -> None:
        db = self.r["database"]
        if db.get("available"):
            self.heading(f"Database {db['name']}: {human_bytes(db['bytes'])}", CATALOG)
        else:
            self.heading("Database")
            self.missing("database size", db)

    def _tables(self) -> None:
        tables = self.r["tables"]
        self.heading("Tables", "catalog; rows and bytes/row: estimate")
        if self.missing("table sizes", tables):
            return
        rows, missing = [], []
        for t in tables["rows"]:
            if not t.get("available"):
                rows.append([t["table"], "", "", "", "", _count(t.get("row_estimate"), "~"), "",
                             "not available (below)"])
                missing.append(t)
                continue
            rows.append([
                t["table"], human_bytes(t["heap_bytes"]), human_bytes(t["toast_bytes"]),
                human_bytes(t["index_bytes"]), human_bytes(t["total_bytes"]),
                _count(t["row_estimate"], "~"),
                human_bytes(t["bytes_per_row"]) if t["bytes_per_row"] is not None else "",
                "TOAST > heap" if t["toast_exceeds_heap"] else t.get("note", ""),
            ])
        self.grid(rows, ["table", "heap", "TOAST", "indexes", "total", "rows", "bytes/row", "note"])
        for t in missing:
            self.missing(f"size of {t['table']}", t)

    def _messages(self) -> None:
        m = self.r["messages"]
        if not m.get("available"):
            self.heading("messages.content")
            self.missing("message content figures", m)
            return
        exact = m["source"] == EXACT
        est = "" if exact else "~"
        limit = f"{self.r['settings']['limit_kb']:g} KB"
        scan = m["scan"]
        if exact:
            self.heading("messages.content", f"exact: every row ({scan['percent']:g}% of blocks), "
                                             f"{scan['rows_read']:,} messages")
        else:
            blocks = f" of {scan['heap_blocks']:,}" if scan["heap_blocks"] is not None else ""
            toast = (f" of its {human_bytes(scan['toast_bytes'])}"
                     if scan.get("toast_bytes") is not None else "")
            self.heading("messages.content",
                         f"sample: {scan['percent']:g}% of blocks, seed {scan['seed']}: "
                         f"{scan['rows_read']:,} rows from {scan['heap_blocks_with_rows']:,}{blocks} "
                         f"heap blocks, ~{human_bytes(scan['toast_bytes_read'])}{toast} TOAST")
        self.line(f"messages: {est}{m['messages']:,} ({m['messages_source']}), "
                  f"{est}{human_bytes(m['logical_bytes'])} as JSON text, "
                  f"{est}{human_bytes(m['disk_bytes'])} on disk ({m['bytes_source']})")
        for label, key in (("on-disk size", "disk_percentiles"), ("logical size", "logical_percentiles")):
            p = m[key]
            self.line(f"{label}: p50 {human_bytes(p['p50'])}, p95 {human_bytes(p['p95'])}, "
                      f"p99 {human_bytes(p['p99'])}, max {human_bytes(p['max'])} ({p['source']})")
        o = m["over_limit"]
        margin = f" ± {o['share_margin_95'] * 100:.2f} pts" if "share_margin_95" in o else ""
        self.line(
            f"over {limit} of JSON text (the oversized-message limit, from "
            f"{self.r['settings']['limit_origin']}): {est}{o['count']:,} messages ({o['count_source']}) "
            f"= {o['share'] * 100:.2f}%{margin} ({o['share_source']}: {o['in_scan']:,} of "
            f"{scan['rows_read']:,}), holding {o['logical_share'] * 100:.1f}% of the JSON text"
        )
        self._top(m["top"], limit, exact)
        self._roles_and_tools(m, est)

    def _top(self, top: dict[str, Any], limit: str, exact: bool) -> None:
        note = f"; {top['note']}" if top.get("note") else ""
        self.heading(f"Largest messages over {limit}", top["source"] + note)
        if top["rows"]:
            self.grid(
                [[t["id"], t["session_prefix"], t["role"], t.get("tool") or "",
                  human_bytes(t["logical_bytes"]), human_bytes(t["disk_bytes"]),
                  ("out of line" if t["out_of_line"] else "inline")
                  + ("" if t["out_of_line_source"] == EXACT else " (inferred)"),
                  t.get("largest_key") or "?"] for t in top["rows"]],
                ["id", "session", "role", "tool", "logical", "on disk", "stored", "bytes in"],
            )
        else:
            self.line(f"none over {limit}" + ("" if exact else " in the sample"))
        if "detail" in top:
            self.missing("message details (tool, largest key)", top["detail"])
        if "storage" in top:
            self.missing("storage location", top["storage"])

    def _roles_and_tools(self, m: dict[str, Any], est: str) -> None:
        roles = m["by_role"]
        self.heading("Bytes by role", roles["source"])
        if roles["rows"]:
            self.grid(
                [[g["role"], _count(g["messages"], est), est + human_bytes(g["logical_bytes"]),
                  f"{g['logical_share'] * 100:.1f}%", est + human_bytes(g["disk_bytes"])]
                 for g in roles["rows"]],
                ["role", "messages", "logical", "share", "on disk"],
            )
        else:
            self.line("no messages")
        tools, t = m["by_tool"], m["truncation"]
        cut = f"{t['truncate_at_kb']:g} KB"
        self.heading("Bytes by tool (tool results)", tools["source"])
        if tools["rows"]:
            self.grid(
                [[g["tool"], _count(g["results"], est), est + human_bytes(g["logical_bytes"]),
                  f"{g['logical_share'] * 100:.1f}%", est + human_bytes(g["disk_bytes"]),
                  est + human_bytes(g["logical_bytes_saved"]), "~" + human_bytes(g["disk_bytes_saved"])]
                 for g in tools["rows"]],
                ["tool", "results", "logical", "share", "on disk", f"saved at {cut}", "saved on disk"],
            )
        else:
            self.line("no tool results")
        self.line(
            f"truncating tool outputs at {cut} would save {est}{human_bytes(t['logical_bytes_saved'])} "
            f"of JSON text ({t['logical_source']}) and ~{human_bytes(t['disk_bytes_saved'])} on disk "
            f"({t['disk_source']}: same compression ratio), over {est}{t['outputs_truncated']:,} outputs"
        )

    def _sessions(self) -> None:
        s = self.r["sessions"]
        if not s.get("available"):
            self.heading("Sessions with the most stored bytes")
            self.missing("largest sessions", s)
            return
        exact = s["source"] == EXACT
        self.heading("Sessions with the most stored bytes", s["source"] + ("" if exact else "; bytes exact"))
        if s.get("note"):
            self.line(s["note"])
        if not s["rows"]:
            self.line("no sessions")
            return
        self.grid(
            [[x["session_prefix"], _short(x.get("title"), 40), f"{x['messages']:,}",
              human_bytes(x["disk_bytes"])] + ([human_bytes(x.get("logical_bytes"))] if exact else [])
             for x in s["rows"]],
            ["session", "title", "messages", "on disk"] + (["logical"] if exact else []),
        )

    def _maintenance(self) -> None:
        m = self.r["maintenance"]
        if not m.get("available"):
            self.heading("Dead rows and vacuum")
            self.missing("dead rows and vacuum" + (f" ({m['node']})" if m.get("node") else ""), m)
            return
        self.heading(f"Dead rows and vacuum ({m['node']})", "rows: estimate; times: catalog")
        self.grid(
            [[x["table"], f"{x['live_rows']:,}", f"{x['dead_rows']:,}", f"{x['dead_share'] * 100:.1f}%",
              _when(x["last_vacuum"]), _when(x["last_autovacuum"]),
              _when(max(filter(None, (x["last_analyze"], x["last_autoanalyze"])), default=None))]
             for x in m["rows"]],
            ["table", "live rows", "dead rows", "dead", "last vacuum", "last autovacuum", "last analyze"],
        )

    def _indexes(self) -> None:
        ix = self.r["indexes"]
        since = (f", counters since {_when(ix['counters_since'])}" if ix.get("counters_since")
                 else ", counters never reset")
        self.heading(f"Indexes (counters from {ix['node']}{since})", CATALOG)
        unused = ix["unused"]
        if not self.missing("unused indexes", unused):
            if unused["rows"]:
                self.line("unused (never scanned, not unique or primary):")
                self.grid([[u["table"], u["index"], human_bytes(u["bytes"])] for u in unused["rows"]],
                          ["table", "index", "size"])
            else:
                self.line("unused: none")
        dup = ix["duplicate"]
        if not self.missing("duplicate indexes", dup):
            if dup["rows"]:
                self.line("duplicate (same table, same key columns):")
                self.grid([[d["table"], d["index"], d["duplicate_of"], human_bytes(d["bytes"])]
                           for d in dup["rows"]], ["table", "index", "duplicates", "size"])
            else:
                self.line("duplicate: none")


def _count(value: int | None, prefix: str = "") -> str:
    return "" if value is None else f"{prefix}{value:,}"


def _short(text: str | None, width: int) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _when(value: str | None) -> str:
    return value[:16].replace("T", " ") if value else "never"
