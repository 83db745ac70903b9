"""retired-tool: the agent called, or an execution used, a tool that Nomos has retired."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

from nomos_forensics.rulekit import Evidence, Finding, Need, Option, Rule, Session, Severity, excerpt, hookimpl

# MCP clients may prefix a tool with its server: "nomos.request_execution", "mcp__nomos__request_execution"
PREFIX_SEPARATORS = (".", "/", ":", "__")


class RetiredTool(Rule):
    """A call to a retired tool (by default `request_execution`).

    Detects: a tool call in the transcript whose name is on the retired list (also when an MCP
    client prefixed it with a server name, like `nomos.request_execution`), and rows of
    `nomos_plan_executions` whose `tool` is on the list. One finding per retired tool, with the
    calls and executions as evidence. Executions are read when that table exists; on older
    databases without it the transcript is still checked.
    Root cause: the release retired `request_execution` (all mutations route through `run`),
    but the agent still reaches for it: its prompt (SOUL.md, AGENTS.md, skills, system notes)
    or a client's tool list still names it, or the server still serves it. A call that fails
    wastes a step; one that succeeds bypasses the `run` path and its audit.
    Fix: remove the retired tool from the MCP server and from every prompt, skill and client
    tool list, and route the mutation through `run` with a shell command.
    """

    code = "NF104"
    name = "retired-tool"
    severity = Severity.FRICTION
    config = {"tools": Option(["request_execution"], "the retired tool names; a call to any of them is a finding")}
    # Executions are optional: read when loaded for another rule, or queried when the table exists.
    needs = frozenset({Need.MESSAGES})
    wants = frozenset({Need.EXECUTIONS})  # checked when the table exists; never a reason to skip

    def check(self, session: Session, ctx) -> Iterator[Finding]:
        retired = tuple(self.options["tools"])  # hashable: _retired_name remembers its answers
        if not retired:
            return
        calls: dict[str, list] = {name: [] for name in retired}
        for message in session.messages:
            if not message.tool_calls:  # most messages
                continue
            for call in message.tool_calls:
                name = _retired_name(call.name, retired)
                if name:
                    calls[name].append((message, f"{message.role} called {call.name}{_args(call.arguments)}"))
        # a stored result without its call (calls lost in an odd content shape) still counts
        for message in session.messages:
            if message.role == "tool":
                named = (message.tool_name, *(r.name for r in message.tool_results))
            elif message.tool_results:  # legacy: results inside the assistant message
                named = tuple(r.name for r in message.tool_results)
            else:
                continue
            for result_name in named:
                name = _retired_name(result_name, retired)
                if name and not calls[name]:
                    calls[name].append((message, f"result of {result_name}"))
        executions: dict[str, list[Evidence]] = {name: [] for name in retired}
        for row in _executions(session, ctx):
            name = _retired_name(row.get("tool") if isinstance(row.get("tool"), str) else None, retired)
            if name:
                command = row.get("command") if isinstance(row.get("command"), str) else ""
                executions[name].append(Evidence(
                    None, session.turn_at(row.get("requested_at")),
                    f"execution {row.get('id')}: {row.get('tool')} `{excerpt(command, 100)}`"
                    f" ({row.get('status') or 'no status'})",
                ))
        for name in retired:
            found, rows = calls[name], executions[name]
            if not found and not rows:
                continue
            parts = []
            if found:
                parts.append(f"{len(found)} call{'s' if len(found) != 1 else ''}")
            if rows:
                parts.append(f"{len(rows)} execution{'s' if len(rows) != 1 else ''}")
            turns = sorted({m.turn for m, _ in found})
            where = f" (turn {', '.join(map(str, turns[:5]))})" if turns else ""
            yield self.finding(
                f"retired tool {name}: {' and '.join(parts)}{where}; mutations go through run",
                [*found[:10], *rows[:10]],
            )


@functools.lru_cache(maxsize=4096)  # a database has a few dozen distinct tool names
def _retired_name(called: str | None, retired: tuple[str, ...]) -> str | None:
    if not called:
        return None
    lowered = called.strip().lower()
    for name in retired:
        wanted = name.lower()
        if lowered == wanted:
            return name
        if lowered.endswith(wanted) and _has_prefix_separator(lowered, wanted):
            return name
    return None


def _has_prefix_separator(called: str, wanted: str) -> bool:
    return called[: len(called) - len(wanted)].endswith(PREFIX_SEPARATORS)


def _args(arguments: Any) -> str:
    if isinstance(arguments, Mapping):
        command = arguments.get("command") or arguments.get("cmd")
        if isinstance(command, str) and command.strip():
            return f" `{excerpt(command, 100)}`"
    return ""


def _executions(session: Session, ctx) -> list[Mapping[str, Any]]:
    """Executions the engine loaded (absent when the database has no executions table)."""
    return [r for r in session.extras.get("executions") or [] if isinstance(r, Mapping)]




@hookimpl
def nomos_forensics_rules():
    return [RetiredTool]
