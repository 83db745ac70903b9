"""tool-fanout: more than 30 tool calls in one turn; N+1 when one tool makes most of them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from nomos_forensics.rulekit import Evidence, Finding, Option, Rule, Severity, hookimpl

# What one call does instead of the per-item loop, for the tools the release ships (runbook:
# "Enrich bulk tools", e.g. `list_lxcs` with a state filter); other tools get a generic line.
BULK = {
    "list_lxcs": "one `list_lxcs` call without a vmid (the state filter picks active or destroyed containers)",
    "run": "one `run` whose command loops over the targets (`for ct in …; do …; done`)",
    "bash": "one `bash` call that runs a script over all the items",
    "upsert_knowledge": "one `upsert_knowledge` call with an `about` array",
    "http_get": "one request for the whole list, or the fetched page reused",
}


class ToolFanout(Rule):
    """More than 30 tool calls in one turn; an N+1 fan-out when one tool makes most of them.

    Detects: a turn (a user message and everything up to the next one) with more than
    `max_calls` tool calls (default 30; exactly 30 does not fire), whatever the tools. When a
    single tool makes up at least `dominance` of them (default 0.5) the finding is an N+1
    fan-out ("same tool repeated") and its fix names that tool, its count and the bulk call to
    use; otherwise it is an excessive turn and the fix lists the top tools. Calls spread over
    several turns never add up: three turns of 30 `run` calls do not fire. The evidence names
    the tool (or the top tools) and the counts.
    Not flagged: 30 calls or fewer in a turn, however repetitive (a mini-swe-agent
    run on SWE-bench that reads, edits and tests in 28 `bash` calls is an ordinary turn); calls
    before the first user message, which are no turn (a sub-agent run stored without its prompt:
    192 `BashOutput` polls in one such Claude Code sidechain go uncounted).
    Root cause: N+1 fan-out: the agent calls a per-item tool in a loop instead of one bulk call;
    or the turn has no plan and probes tool after tool.
    Fix: enrich the bulk tools (e.g. `list_lxcs` with a state filter) and tighten SOUL.md's tool-selection rules.
    """

    code = "NF005"
    name = "tool-fanout"
    severity = Severity.FRICTION
    config = {
        "max_calls": Option(30, "a turn with more tool calls than this is a fan-out", minimum=1),
        "dominance": Option(0.5, "share of the turn's calls one tool must make to count as repeated (N+1)",
                            minimum=0.0, maximum=1.0),
    }

    def check(self, session, ctx) -> Iterator[Finding]:
        max_calls = self.options["max_calls"]
        dominance = self.options["dominance"]
        for turn in session.turns:
            calls = turn.tool_calls
            if len(calls) <= max_calls:
                continue
            counts = Counter(c.display_name for c in calls).most_common()
            tool, count = counts[0]
            repeated = count / len(calls) >= dominance
            callers = [m for m in turn.messages if any(c.display_name == tool for c in m.tool_calls)]
            first = callers[0] if callers else turn.messages[0]
            top = ", ".join(f"{name} ×{n}" for name, n in counts[:3])
            data = {"turn": turn.number, "tool": tool, "count": count, "calls": len(calls),
                    "tools": len(counts), "repeated": repeated}
            if repeated:
                evidence = f"{tool} called {count}× of {len(calls)} tool calls in turn {turn.number}"
                yield self.finding(f"turn {turn.number}: {len(calls)} tool calls, {tool} ×{count} (N+1)",
                                   [Evidence(first.id, turn.number, evidence)], data=data,
                                   fix=_repeated_fix(turn.number, tool, count, len(calls)))
            else:
                evidence = f"{len(calls)} tool calls over {len(counts)} tools in turn {turn.number} ({top})"
                yield self.finding(f"turn {turn.number}: {len(calls)} tool calls over {len(counts)} tools ({top})",
                                   [Evidence(first.id, turn.number, evidence)], data=data,
                                   fix=_spread_fix(turn.number, len(calls), top, max_calls))


def _repeated_fix(turn: int, tool: str, count: int, calls: int) -> str:
    bulk = BULK.get(tool, f"a bulk form of `{tool}` that takes the whole list of items")
    return (f"turn {turn} called `{tool}` {count} times ({calls} calls in all): replace the per-item calls with "
            f"{bulk}, and tighten SOUL.md's tool-selection rules to prefer it.")


def _spread_fix(turn: int, calls: int, top: str, limit: int) -> str:
    return (f"turn {turn} made {calls} tool calls ({top}), over the runbook's {limit} per turn: have the agent "
            f"plan the turn and use bulk tools (e.g. `list_lxcs` with a state filter) instead of probing item by "
            f"item; tighten SOUL.md's tool-selection rules.")


@hookimpl
def nomos_forensics_rules():
    return [ToolFanout]
