"""tool-error-ignored: a tool call failed and the agent answered as if it had not."""

from __future__ import annotations

from collections.abc import Iterator

from nomos_forensics.rulekit import (
    ADMITS,
    SUCCESS_CLAIM,
    Evidence,
    Finding,
    Message,
    Rule,
    Severity,
    canonical,
    excerpt,
    failed_action,
    hookimpl,
    normalise,
    results_of,
)

HEAD, TAIL = 4000, 2000  # characters of a long answer read for an admission


class ToolErrorIgnored(Rule):
    """A tool call failed and the agent's next words carry on as if it had worked.

    Detects: an assistant reply in text that calls no tool, whose turn's last tool result
    before it is an error (the row's error flag: `is_error` on a `tool` row or on a result
    the assistant message carries; or, without the flag, a `tool` row's output that opens as an
    error: "Error: …", "ValueError: …", a traceback, "not found", `{"error": …}`, a non-zero exit
    or an HTTP 4xx/5xx status in its first characters), when the reply neither admits a problem (no "error",
    "failed", "couldn't", "unfortunately", "however", "but", ..., nor the same in the
    corpus's other languages: "falhou", "fehlgeschlagen", "失败", "エラー", ...) nor goes on to
    call another tool. Blocker when the reply claims the task is done ("Your flight has been
    booked", "I've updated the file", "Done!"): the user is told something the record
    contradicts; friction otherwise (the agent moved on without a word on the failure).
    One finding per session, quoting each such reply and naming the failed tool.
    Not flagged: an error followed by another tool call (a retry or another way: the agent
    changed course), a reply that says the call failed, a later successful result (only the
    last result before the reply counts), an error of a coding client's general shell
    (`Bash`, `shell`, `execute_command`, ...: a non-zero exit is as often a probe, `tool
    --version`, as a failed action), an "error" of a tool that asks the user (`AskUserQuestion`,
    `ExitPlanMode`: the user declined), a tool error after which the user speaks first. Without
    the flag, only an output's opening is read (the scan ships a tool row's first 240
    characters): an error said further down, or in a result carried inside an assistant
    message, is not seen; nor is an output that only mentions an error ("3 tickets: 'Login
    error on mobile' …").
    Root cause: the agent does not read its tool results, or reads an error as success.
    Fix: make the agent check each tool result before answering and say when a call failed
    (SOUL.md: "never claim an action whose tool call returned an error"); surface tool errors
    to the user.
    """

    code = "NF010"
    name = "tool-error-ignored"
    severity = Severity.FRICTION
    reads_tool_record = True  # its blockers move the Outcome (docs/outcome.md, step 4)

    def check(self, session, ctx) -> Iterator[Finding]:
        hits: list[tuple[Message, str, bool]] = []
        last_result: Message | None = None
        for message in session.messages:
            if message.role == "user":
                last_result = None
            elif message.role == "tool" or message.tool_results:
                last_result = message
            if message.role != "assistant" or message.tool_calls or not message.has_text or last_result is None:
                continue
            failed = _failed_tools(last_result)
            if failed:
                text = message.text or ""
                # the whole text, reasoning included: an agent that noticed the failure anywhere did not ignore it
                plain = canonical(normalise(text[:HEAD] + "\n" + text[-TAIL:] if len(text) > HEAD + TAIL else text))
                if not ADMITS.search(plain):
                    hits.append((message, failed, SUCCESS_CLAIM.search(plain) is not None))
            last_result = None  # the reply answered that result
        if not hits:
            return
        claimed = [h for h in hits if h[2]]
        turns = ", ".join(str(t) for t in sorted({m.turn for m, _, _ in hits})[:6])
        tools = ", ".join(sorted({tool for _, tool, _ in hits}))
        evidence = [Evidence(m.id, m.turn, f"after a failed `{tool}`" + (", claims success" if said else "")
                             + f": {excerpt(m.text, 150)}") for m, tool, said in hits]
        worst = claimed[0] if claimed else hits[0]
        yield self.finding(
            f"the agent answered as if a failed tool call had worked ({len(hits)} repl{'ies' if len(hits) != 1 else 'y'}, "
            f"turn {turns}; {tools})",
            evidence,
            severity=Severity.BLOCKER if claimed else None,
            blocker=f"claims success after a failed `{worst[1]}` call" if claimed else None,
            data={"messages": [{"message_id": m.id, "tool": tool, "claims_success": said} for m, tool, said in hits]},
        )


def _failed_tools(result: Message) -> str:
    """The names of the failed actions of a result row (rulekit.failed_action), joined; '' when none."""
    return "/".join(dict.fromkeys(name for name, failed in results_of(result) if failed and failed_action(name)))


@hookimpl
def nomos_forensics_rules():
    return [ToolErrorIgnored]
