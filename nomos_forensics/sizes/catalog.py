"""Catalog figures: the server, the database and table sizes, dead rows and vacuum, unused and
duplicate indexes. Each is read from the catalog, size functions and statistics views."""

from __future__ import annotations

from typing import Any

from ..schema import CONTRACT, SchemaReport
from .estimate import row_estimate
from .figures import CATALOG, ESTIMATE, FIGURE_ERRORS, Runner, iso, rounded, unavailable


class CatalogFigures:
    """The catalog figures, and what the message figures need from them (the block size, the
    messages table's catalog row and sizes)."""

    def __init__(self, runner: Runner, schema: SchemaReport, notes: list[str]) -> None:
        self.sql = runner
        self.schema = schema
        self.notes = notes
        self.table_names = list(CONTRACT)
        self.node_info: dict[str, Any] = {}
        self.catalog: dict[str, Any] = {}  # table name -> sizes_tables row
        self.table_sizes: dict[str, dict[str, int]] = {}

    @property
    def block_size(self) -> int:
        return self.node_info.get("block_size", 8192)

    def node(self) -> dict[str, Any]:
        try:
            row = self.sql.rows("sizes_node", None, "identifying the server")[0]
        except FIGURE_ERRORS as error:
            return unavailable(error)
        self.node_info = {
            "available": True,
            "source": CATALOG,
            "database": row.database,
            "role": "standby" if row.standby else "primary",
            "standby": bool(row.standby),
            "address": f"{row.address}:{row.port}" if row.address else "local socket",
            "server_version": row.server_version,
            "server_version_num": int(row.server_version_num),
            "block_size": int(row.block_size),
            "stats_reset": iso(row.stats_reset),
        }
        return self.node_info

    def node_label(self) -> str:
        if not self.node_info.get("available"):
            return "unknown node"
        return f"{self.node_info['role']} {self.node_info['address']}"

    def database(self) -> dict[str, Any]:
        try:
            row = self.sql.rows("sizes_database", None, "measuring the database size")[0]
        except FIGURE_ERRORS as error:
            return unavailable(error)
        return {"available": True, "source": CATALOG, "name": row.database, "bytes": int(row.bytes)}

    def tables(self) -> dict[str, Any]:
        migration = self.schema.migration
        for name in self.schema.missing_tables:
            at = f" (database at migration {migration:03d})" if migration is not None else ""
            self.notes.append(f"table {name} is missing{at}; skipped")
        try:
            rows = self.sql.rows("sizes_tables", {"tables": self.table_names}, "listing the Nomos tables")
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
                    "row_estimate": rounded(row_estimate(cat.reltuples, cat.relpages, None)),
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
            "row_estimate": rounded(rows),
            "row_estimate_source": ESTIMATE,
            "bytes_per_row": rounded(sizes["total_bytes"] / rows) if rows else None,
            "bytes_per_row_source": ESTIMATE,
        })
        if cat.relkind == "p":
            entry["note"] = "partitioned: its partitions hold the bytes"
        return entry

    def maintenance(self) -> dict[str, Any]:
        if not self.node_info.get("available"):
            return unavailable("the server's role (primary or standby) is unknown")
        if self.node_info["standby"]:
            return {"available": False, "reason": "n/a on a standby", "node": self.node_label()}
        try:
            rows = self.sql.rows("sizes_maintenance", {"tables": self.table_names},
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
                "last_vacuum": iso(row.last_vacuum),
                "last_autovacuum": iso(row.last_autovacuum),
                "last_analyze": iso(row.last_analyze),
                "last_autoanalyze": iso(row.last_autoanalyze),
                "vacuum_source": CATALOG,
            })
        return {"available": True, "source": CATALOG, "node": self.node_label(), "rows": out}

    def indexes(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "source": CATALOG,
            "node": self.node_label(),
            "counters_since": self.node_info.get("stats_reset"),
        }
        params = {"tables": self.table_names}
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
        if self.node_info.get("standby"):
            self.notes.append("index scan counters are this standby's own: an index unused here "
                              "may serve the primary or another replica")
        return result

