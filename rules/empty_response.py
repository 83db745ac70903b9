"""empty-response: the model returned a blank completion."""

from __future__ import annotations

from collections.abc import Iterator

from nomos_forensics.rulekit import Finding, Rule, Severity, hookimpl


class EmptyResponse(Rule):
    """An assistant message with no text and no tool calls: a blank completion.

    Detects: an assistant message whose text is missing, null, empty or whitespace only, that
    makes no tool call and carries no tool results (a persisted error card counts as blank
    too: the user saw no answer).
    Root cause: the model returned a blank completion (the "empty assistant bubble").
    Fix: retry the completion (up to 3x) and surface the error to the user instead of an empty bubble.
    """

    code = "NF003"
    name = "empty-response"
    severity = Severity.BLOCKER

    def check(self, session, ctx) -> Iterator[Finding]:
        blanks = [
            m for m in session.messages
            if m.role == "assistant" and not m.has_text and not m.tool_calls and not m.tool_results
        ]
        if not blanks:
            return
        evidence = [(m, m.error or f"(blank reply, {m.shape} content)") for m in blanks]
        where = ", ".join(str(t) for t in sorted({m.turn for m in blanks}))
        yield self.finding(
            f"{len(blanks)} empty assistant repl{'y' if len(blanks) == 1 else 'ies'} (turn{'s' if ',' in where else ''} {where})",
            evidence,
            blocker="empty assistant response",
        )


@hookimpl
def nomos_forensics_rules():
    return [EmptyResponse]
