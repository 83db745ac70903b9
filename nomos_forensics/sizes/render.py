"""Rendering the `sizes` report for people (table, markdown) or scripts (json). Formats only;
decides nothing."""

from __future__ import annotations

from typing import Any

from ..render import Format, human_bytes, to_json
from .figures import CATALOG, EXACT
from .render_messages import messages
from .writer import Writer, count, short, when


def render(report: dict[str, Any], fmt: Format) -> str:
    """The report for people (table, markdown) or scripts (json). Formats only; decides nothing."""
    if fmt == Format.JSON:
        return to_json(report)
    return _Text(report, fmt).render()


class _Text(Writer):
    """The table and markdown report, section by section."""

    def __init__(self, report: dict[str, Any], fmt: Format) -> None:
        super().__init__(fmt)
        self.r = report

    def render(self) -> str:
        r = self.r
        node = r.get("node", {})
        where = f"{node['role']}, {node['address']}" if node.get("available") else "node unknown"
        mode = "exact full scans" if r["mode"] == EXACT else "catalog and a block sample"
        title = f"Sizes of {r['target']} ({where}; {mode})"
        self.out.append(f"## {title}" if self.md else title)
        self._database()
        self._tables()
        messages(self, r)
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
                rows.append([t["table"], "", "", "", "", count(t.get("row_estimate"), "~"), "",
                             "not available (below)"])
                missing.append(t)
                continue
            rows.append([
                t["table"], human_bytes(t["heap_bytes"]), human_bytes(t["toast_bytes"]),
                human_bytes(t["index_bytes"]), human_bytes(t["total_bytes"]),
                count(t["row_estimate"], "~"),
                human_bytes(t["bytes_per_row"]) if t["bytes_per_row"] is not None else "",
                "TOAST > heap" if t["toast_exceeds_heap"] else t.get("note", ""),
            ])
        self.grid(rows, ["table", "heap", "TOAST", "indexes", "total", "rows", "bytes/row", "note"])
        for t in missing:
            self.missing(f"size of {t['table']}", t)

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
            [[x["session_prefix"], short(x.get("title"), 40), f"{x['messages']:,}",
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
              when(x["last_vacuum"]), when(x["last_autovacuum"]),
              when(max(filter(None, (x["last_analyze"], x["last_autoanalyze"])), default=None))]
             for x in m["rows"]],
            ["table", "live rows", "dead rows", "dead", "last vacuum", "last autovacuum", "last analyze"],
        )

    def _indexes(self) -> None:
        ix = self.r["indexes"]
        since = (f", counters since {when(ix['counters_since'])}" if ix.get("counters_since")
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
