"""The scan summary as tables for people: headings, headers and rows; rendering is the caller's."""

from __future__ import annotations

from typing import Any

from ..card import Outcome
from ..model import excerpt
from ..render import human_bytes
from .summary import Summary, ranked


def summary_tables(summary: Summary) -> list[tuple[str, list[str], list[list[Any]]]]:
    """(heading, headers, rows) for the people-facing summary; rendering is the caller's."""
    s = summary
    pct = lambda n, of=None: f"{100 * s.share(n, of):.1f}%"  # noqa: E731
    tables = [
        ("Overview", ["sessions", "with findings", "blocker", "friction", "cosmetic", *Outcome.ALL],
         [[s.sessions, f"{s.sessions_with_findings} ({pct(s.sessions_with_findings)})",
           s.by_severity["blocker"], s.by_severity["friction"], s.by_severity["cosmetic"],
           *(s.outcomes[o] for o in Outcome.ALL)]]),
        ("Signatures", ["rule", "sessions", "share"],
         [[rule, n, pct(n)] for rule, n in ranked(s.by_rule)]),
        ("Worst sessions", ["id", "title", "severity", "outcome", "findings"],
         [[w["id"][:8], excerpt(w["title"], 40), w["severity"], w["outcome"], ", ".join(w["findings"])] for w in s.worst]),
        ("Tools", ["tool", "calls", "sessions", "fan-out turns", "max calls in a turn"],
         [[name, n, s.tool_sessions[name], s.fanout.get(name, {}).get("turns", 0),
           s.fanout.get(name, {}).get("max_calls", "")] for name, n in ranked(s.tool_calls)[:15]]),
    ]
    by_model = []
    for model, counts in sorted(s.models.items(), key=lambda kv: (-kv[1]["sessions"], kv[0])):
        fired = [(rule, counts[rule]) for rule, _ in ranked(s.by_rule) if counts[rule]]
        cells = ", ".join(f"{rule} {n} ({pct(n, counts['sessions'])})" for rule, n in fired) or "none"
        by_model.append([model, counts["sessions"], cells])
    tables.append(("Signatures by model", ["model", "sessions", "signatures (sessions, rate)"], by_model))
    tables.append((
        "Biggest messages", ["message", "session", "role", "tool", "logical", "on disk"],
        [[b["message_id"], b["session"], b["role"], b["tool"] or "", human_bytes(b["logical_bytes"]),
          human_bytes(b["disk_bytes"])] for b in s.biggest],
    ))
    groups = unexplained_table(s)
    if groups is not None:
        tables.append(groups)
    if s.rule_errors:
        tables.append(("Rule errors", ["rule", "sessions"], [[r, n] for r, n in ranked(s.rule_errors)]))
    return tables


def unexplained_table(summary: Summary, top: int = 5) -> tuple[str, list[str], list[list[Any]]] | None:
    """The largest groups of failures no rule explains (docs/unexplained.md), or None when none."""
    if summary.unexplained is None:
        return None
    data = summary.unexplained.to_json(top=top)
    if not data["unexplained"]:
        return None
    heading = (f"Unexplained failures: {data['unexplained']} of {data['failures']} failed, partial or unknown "
               f"sessions carry no finding of friction or above; {100 * data['grouped_share']:.0f}% of them in "
               f"groups of 3 or more" + (f"; {data['muted']} muted" if data["muted"] else ""))
    rows = [[g["id"], g["sessions"], f"{100 * g['share_of_failures']:.1f}%",
             (f"{g['name']}: " if g["name"] else "") + g["description"],
             " ".join(e["id"][:8] for e in g["examples"])] for g in data["groups"]]
    return heading, ["group", "sessions", "of failures", "what they share", "examples"], rows
