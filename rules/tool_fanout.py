"""tool-fanout: one tool called over and over in a turn (N+1): over 30 alike calls, or a loop over items."""

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
    """One tool called over and over in a turn, where one bulk call would do (N+1).

    Detects: in one turn (a user message and everything up to the next one), either of:
    one tool called more than `max_calls` times (default 30; exactly 30 does not fire) whose
    calls are alike: at least `alike` of them (default half) send arguments of one shape, ids,
    numbers and whitespace masked (`pct status 101`, `pct status 102`, ...), over three or more
    different values; or a run of
    `min_run` (default 10) or more consecutive calls of one tool with one argument shape and
    three or more different values (a loop over items), whatever the turn's total. Where the database
    did not give the arguments (an unnamed call, older rows), the count alone decides. One
    finding per turn, for the tool with the most calls; it names the tool, how many times it was
    called, how alike the arguments were (shapes, distinct values, the longest run) and the bulk
    call to use instead.
    Not flagged: a busy turn of varied calls: 40 calls over `Read`, `Edit` and `Bash`, or 35
    `bash` calls that each run a different command (a coding agent working, not looping: the
    shape of `grep -n X a.py` and `pytest tests/b` differ); 30 calls or fewer of one tool that
    form no run of 10 alike; calls with the same arguments each time, however many (a poll, a
    retry, or an export that kept no arguments: a Cascade log's 42 "Edited relevant file" calls
    in one turn are 42 edits); calls spread over several turns (three
    turns of 30 `run` calls); calls before the first user message, which are no turn (a sub-agent
    run stored without its prompt: 192 `BashOutput` polls in one such Claude Code sidechain).
    Root cause: N+1 fan-out: the agent calls a per-item tool in a loop instead of one bulk call.
    Fix: enrich the bulk tools (e.g. `list_lxcs` with a state filter) and tighten SOUL.md's tool-selection rules.
    """

    code = "NF005"
    name = "tool-fanout"
    severity = Severity.FRICTION
    config = {
        "max_calls": Option(30, "a tool called more times than this in one turn, with alike arguments, fans out",
                            minimum=1),
        "alike": Option(0.5, "share of that tool's calls that must send arguments of one shape", minimum=0.0,
                        maximum=1.0),
        "min_run": Option(10, "consecutive calls of one tool, one argument shape, different values: a loop over "
                          "items", minimum=2),
    }

    def check(self, session, ctx) -> Iterator[Finding]:
        max_calls, alike, min_run = self.options["max_calls"], self.options["alike"], self.options["min_run"]
        for turn in session.turns:
            calls = turn.tool_calls
            if len(calls) < min(min_run, max_calls + 1):
                continue
            found = _fanout(calls, max_calls, alike, min_run)
            if found is None:
                continue
            tool, data = found
            callers = [m for m in turn.messages if any(c.display_name == tool for c in m.tool_calls)]
            first = callers[0] if callers else turn.messages[0]
            data = {"turn": turn.number, "tool": tool, "calls": len(calls), "repeated": True, **data}
            yield self.finding(f"turn {turn.number}: `{tool}` called {data['count']} times{_how(data)} (N+1)",
                               [Evidence(first.id, turn.number, f"{tool} called {data['count']}× of {len(calls)} "
                                         f"tool calls in turn {turn.number}{_how(data)}")],
                               data=data, fix=_fix(turn.number, tool, data["count"], len(calls)))


def _fanout(calls, max_calls: int, alike: float, min_run: int) -> tuple[str, dict] | None:
    """The tool of the turn that fans out most, with what its calls share; None when none does."""
    by_tool: dict[str, list] = {}
    for call in calls:
        by_tool.setdefault(call.display_name, []).append(call)
    runs = _runs(calls)
    best = None
    for tool, mine in by_tool.items():
        read = all(c.digest for c in mine)
        shapes = Counter(c.digest[:8] for c in mine) if read else Counter()
        top = shapes.most_common(1)[0][1] / len(mine) if read else None
        run = runs.get(tool, 0)
        values = len({c.digest for c in mine}) if read else None
        over = len(mine) > max_calls and (top is None or (top >= alike and values >= 3))
        if over or run >= min_run:
            data = {"count": len(mine), "by": "count" if over else "run", "arguments_read": read,
                    "shapes": len(shapes) if read else None,
                    "alike": round(top, 3) if top is not None else None,
                    "values": values, "run": run}
            if best is None or len(mine) > best[1]["count"]:
                best = (tool, data)
    return best


def _runs(calls) -> dict[str, int]:
    """Per tool, its longest run of consecutive calls with one argument shape and three or more
    different values: a loop over items, not a poll or a retry between two calls."""
    longest: dict[str, int] = {}
    start = 0
    for end in range(1, len(calls) + 1):
        if end < len(calls) and _same_shape(calls[end], calls[start]):
            continue
        run = calls[start:end]
        if len(run) > 2 and len({c.digest for c in run}) >= 3:
            name = run[0].display_name
            longest[name] = max(longest.get(name, 0), len(run))
        start = end
    return longest


def _same_shape(a, b) -> bool:
    return a.name == b.name and a.digest is not None and b.digest is not None and a.digest[:8] == b.digest[:8]


def _how(data: dict) -> str:
    """How alike the calls were, for the finding's message."""
    if not data["arguments_read"]:
        return " (arguments not read)"
    if data["by"] == "run":
        return f", {data['run']} in a row alike but for ids and numbers ({data['values']} different values)"
    return f", {round(100 * data['alike'])}% of them alike but for ids and numbers ({data['values']} different values)"


def _fix(turn: int, tool: str, count: int, calls: int) -> str:
    bulk = BULK.get(tool, f"a bulk form of `{tool}` that takes the whole list of items")
    return (f"turn {turn} called `{tool}` {count} times ({calls} calls in all): replace the per-item calls with "
            f"{bulk}, and tighten SOUL.md's tool-selection rules to prefer it.")


@hookimpl
def nomos_forensics_rules():
    return [ToolFanout]
