"""The largest messages and sessions: the tally's candidates, then exact details read for just
those rows (the largest key, tool names, where the content is stored, a session's stored bytes)."""

from __future__ import annotations

from typing import Any

from ..schema import SchemaReport
from .figures import EXACT, FIGURE_ERRORS, Runner, rounded, unavailable
from .tally import ContentTally

SESSION_CANDIDATES = 3  # sessions measured exactly per session listed, when ranked from a sample
PG17 = 170000
KEY_LABELS = {
    "text": "text",
    "output": "tool output",
    "tool_results": "tool output (legacy tool_results)",
    "tool_calls": "tool_calls",
    "error": "error",
}


def largest_messages(sql: Runner, tally: ContentTally, source: str, complete: bool,
                     node: dict[str, Any]) -> dict[str, Any]:
    """The largest messages over the limit, with their largest key, tool and storage location."""
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
        for row in sql.rows("sizes_message_detail", {"ids": list(by_id)},
                            "reading the largest messages"):
            record = by_id.get(int(row.id))
            if record is None:
                continue
            record["largest_key"] = key_label(row.kind, row.largest_key)
            record["largest_key_bytes"] = rounded(row.largest_key_bytes)
            if not record["tool"]:
                names = [n for n in (row.call_names or []) + (row.result_names or [])
                         if isinstance(n, str)]
                record["tool"] = row.tool_name or ", ".join(dict.fromkeys(names)) or None
    except FIGURE_ERRORS as error:
        out["detail"] = unavailable(error)
    if node.get("server_version_num", 0) >= PG17:
        try:
            for row in sql.rows("sizes_message_toast_pg17", {"ids": list(by_id)},
                                "checking where the largest messages are stored"):
                if int(row.id) in by_id:
                    by_id[int(row.id)].update(out_of_line=bool(row.out_of_line),
                                              out_of_line_source=EXACT)
        except FIGURE_ERRORS as error:
            out["storage"] = unavailable(error)
    return out


def largest_sessions(sql: Runner, schema: SchemaReport, top: int, tally: ContentTally | None,
                     messages: dict[str, Any]) -> dict[str, Any]:
    """The sessions with the most stored bytes: candidates from the tally, bytes measured exactly."""
    if not messages.get("available") or tally is None:
        return unavailable(f"needs the message figures: {messages.get('reason')}")
    reasons = schema.unmet({"sessions": ("id", "title"), "messages": ("session_id",)})
    if reasons:
        return unavailable("; ".join(reasons))
    complete = messages["source"] == EXACT
    candidates = tally.top_sessions(top if complete else top * SESSION_CANDIDATES)
    if not candidates:
        return {"available": True, "source": messages["source"], "rows": []}
    text_ids = schema.column_type("sessions", "id") in ("text", "character varying")
    try:
        rows = sql.rows("sizes_session_bytes_text" if text_ids else "sizes_session_bytes",
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


def key_label(kind: str | None, key: str | None) -> str:
    if kind != "object":
        return f"whole value ({kind or 'null'})"
    if key is None:
        return "(empty object)"
    return KEY_LABELS.get(key, f"key {key!r}")
