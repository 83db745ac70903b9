"""The messages.content sections of the table and markdown reports: totals and percentiles, the
largest messages, bytes by role and by tool, truncation savings."""

from __future__ import annotations

from typing import Any

from ..render import human_bytes
from .figures import EXACT
from .writer import Writer, count


def messages(w: Writer, report: dict[str, Any]) -> None:
    """The messages.content section and the largest messages, bytes by role and by tool under it."""
    m = report["messages"]
    if not m.get("available"):
        w.heading("messages.content")
        w.missing("message content figures", m)
        return
    exact = m["source"] == EXACT
    est = "" if exact else "~"
    limit = f"{report['settings']['limit_kb']:g} KB"
    scan = m["scan"]
    if exact:
        w.heading("messages.content", f"exact: every row ({scan['percent']:g}% of blocks), "
                                         f"{scan['rows_read']:,} messages")
    else:
        blocks = f" of {scan['heap_blocks']:,}" if scan["heap_blocks"] is not None else ""
        toast = (f" of its {human_bytes(scan['toast_bytes'])}"
                 if scan.get("toast_bytes") is not None else "")
        w.heading("messages.content",
                     f"sample: {scan['percent']:g}% of blocks, seed {scan['seed']}: "
                     f"{scan['rows_read']:,} rows from {scan['heap_blocks_with_rows']:,}{blocks} "
                     f"heap blocks, ~{human_bytes(scan['toast_bytes_read'])}{toast} TOAST")
    w.line(f"messages: {est}{m['messages']:,} ({m['messages_source']}), "
              f"{est}{human_bytes(m['logical_bytes'])} as JSON text, "
              f"{est}{human_bytes(m['disk_bytes'])} on disk ({m['bytes_source']})")
    for label, key in (("on-disk size", "disk_percentiles"), ("logical size", "logical_percentiles")):
        p = m[key]
        w.line(f"{label}: p50 {human_bytes(p['p50'])}, p95 {human_bytes(p['p95'])}, "
                  f"p99 {human_bytes(p['p99'])}, max {human_bytes(p['max'])} ({p['source']})")
    o = m["over_limit"]
    margin = f" ± {o['share_margin_95'] * 100:.2f} pts" if "share_margin_95" in o else ""
    w.line(
        f"over {limit} of JSON text (the oversized-message limit, from "
        f"{report['settings']['limit_origin']}): {est}{o['count']:,} messages ({o['count_source']}) "
        f"= {o['share'] * 100:.2f}%{margin} ({o['share_source']}: {o['in_scan']:,} of "
        f"{scan['rows_read']:,}), holding {o['logical_share'] * 100:.1f}% of the JSON text"
    )
    _top(w, m["top"], limit, exact)
    _roles_and_tools(w, m, est)


def _top(w: Writer, top: dict[str, Any], limit: str, exact: bool) -> None:
    note = f"; {top['note']}" if top.get("note") else ""
    w.heading(f"Largest messages over {limit}", top["source"] + note)
    if top["rows"]:
        w.grid(
            [[t["id"], t["session_prefix"], t["role"], t.get("tool") or "",
              human_bytes(t["logical_bytes"]), human_bytes(t["disk_bytes"]),
              ("out of line" if t["out_of_line"] else "inline")
              + ("" if t["out_of_line_source"] == EXACT else " (inferred)"),
              t.get("largest_key") or "?"] for t in top["rows"]],
            ["id", "session", "role", "tool", "logical", "on disk", "stored", "bytes in"],
        )
    else:
        w.line(f"none over {limit}" + ("" if exact else " in the sample"))
    if "detail" in top:
        w.missing("message details (tool, largest key)", top["detail"])
    if "storage" in top:
        w.missing("storage location", top["storage"])


def _roles_and_tools(w: Writer, m: dict[str, Any], est: str) -> None:
    roles = m["by_role"]
    w.heading("Bytes by role", roles["source"])
    if roles["rows"]:
        w.grid(
            [[g["role"], count(g["messages"], est), est + human_bytes(g["logical_bytes"]),
              f"{g['logical_share'] * 100:.1f}%", est + human_bytes(g["disk_bytes"])]
             for g in roles["rows"]],
            ["role", "messages", "logical", "share", "on disk"],
        )
    else:
        w.line("no messages")
    tools, t = m["by_tool"], m["truncation"]
    cut = f"{t['truncate_at_kb']:g} KB"
    w.heading("Bytes by tool (tool results)", tools["source"])
    if tools["rows"]:
        w.grid(
            [[g["tool"], count(g["results"], est), est + human_bytes(g["logical_bytes"]),
              f"{g['logical_share'] * 100:.1f}%", est + human_bytes(g["disk_bytes"]),
              est + human_bytes(g["logical_bytes_saved"]), "~" + human_bytes(g["disk_bytes_saved"])]
             for g in tools["rows"]],
            ["tool", "results", "logical", "share", "on disk", f"saved at {cut}", "saved on disk"],
        )
    else:
        w.line("no tool results")
    w.line(
        f"truncating tool outputs at {cut} would save {est}{human_bytes(t['logical_bytes_saved'])} "
        f"of JSON text ({t['logical_source']}) and ~{human_bytes(t['disk_bytes_saved'])} on disk "
        f"({t['disk_source']}: same compression ratio), over {est}{t['outputs_truncated']:,} outputs"
    )
