"""tool-fanout: one turn fans out into many calls of the same tool (N+1)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from nomos_forensics.rulekit import Evidence, Finding, Option, Rule, Severity, hookimpl


class ToolFanout(Rule):
    """More than 30 tool calls in one turn, dominated by one repeated tool (N+1 fan-out).

    Detects: a turn (a user message and everything up to the next one) with more than
    `max_calls` tool calls (default 30; exactly 30 does not fire) where a single tool makes up
    at least `dominance` of them (default 0.5). Calls spread over several turns never add up.
    The evidence names the tool and its count.
    Root cause: N+1 fan-out: the agent calls a per-item tool in a loop instead of one bulk call.
    Fix: enrich the bulk tools (e.g. `list_lxcs` with a state filter) and tighten SOUL.md's tool-selection rules.

    """

    code = "NF005"
    name = "tool-fanout"
    severity = Severity.FRICTION
    config = {
        "max_calls": Option(30, "a turn with more tool calls than this is a fan-out", minimum=1),
        "dominance": Option(0.5, "share of the turn's calls one tool must make to count as repeated",
                            minimum=0.0, maximum=1.0),
    }

    def check(self, session, ctx) -> Iterator[Finding]:
        max_calls = self.options["max_calls"]
        dominance = self.options["dominance"]
        for turn in session.turns:
            calls = turn.tool_calls
            if len(calls) <= max_calls:
                continue
            tool, count = Counter(c.display_name for c in calls).most_common(1)[0]
            if count / len(calls) < dominance:
                continue
            callers = [m for m in turn.messages if any(c.display_name == tool for c in m.tool_calls)]
            first = callers[0] if callers else turn.messages[0]
            evidence = [Evidence(first.id, turn.number, f"{tool} called {count}× of {len(calls)} tool calls in turn {turn.number}")]
            yield self.finding(
                f"turn {turn.number}: {len(calls)} tool calls, {tool} ×{count}",
                evidence,
                data={"turn": turn.number, "tool": tool, "count": count, "calls": len(calls)},
            )


@hookimpl
def nomos_forensics_rules():
    return [ToolFanout]
