"""unfinished-session: the transcript stops in a non-terminal state, with no final answer."""

from __future__ import annotations

from collections.abc import Iterator

from nomos_forensics.rulekit import ERROR, TOOL_CALL, TOOL_RESULT, Finding, Message, Rule, Session, Severity, hookimpl


class UnfinishedSession(Rule):
    """The transcript ends without a final assistant answer: the state "Continue" exists for.

    Detects: the last user, assistant or tool message (trailing system messages are ignored)
    is one of: a tool result (a `tool` message, or an assistant message carrying only
    `tool_results`); an assistant message with tool calls whose results were never stored; a
    user message nobody answered; an assistant error card; a blank assistant reply (the release
    treats an empty response as non-terminal). A session that ends right after a `complete_task`
    call, or on its result, is finished; so is one whose last user message is a bare thank-you
    or acknowledgement after a finished answer ("thanks!", "great, thank you"; "ok" only when
    the assistant had not asked a question). A session whose status is `active` and whose last
    message is younger than the `grace-minutes` setting (default 10) is still running and is
    left alone; an `active` session stuck longer, and any `idle` one, is reported.
    Root cause: the agent loop stopped mid-turn: the stream or the server dropped, the model
    returned nothing or an error after a tool result, or the loop hit a limit, and nothing
    resumed it. The user is left without an answer.
    Fix: resume non-terminal sessions (the release's auto-reconnect and "Continue" button, the
    empty-response retry); persist an error card when a turn dies, and make the agent finish
    every turn with a text answer or `complete_task`.
    """

    code = "NF107"
    name = "unfinished-session"
    severity = Severity.FRICTION

    def check(self, session: Session, ctx) -> Iterator[Finding]:
        ending = session.ending
        if ending.finished or ending.last is None or ending.in_flight(ctx.grace):
            return
        last = ending.last
        yield self.finding(f"session ends on {ending.describe()} (turn {last.turn})",
                           [(last, _excerpt_for(ending.kind, last))])


def _excerpt_for(kind: str, last: Message) -> str:
    if kind == ERROR:
        return last.error or ""
    if kind == TOOL_RESULT:
        names = [last.tool_name] if last.role == "tool" else [r.name for r in last.tool_results]
        label = ", ".join(n or "(unnamed)" for n in names) or "(unnamed)"
        return f"(result of {label}{', error' if last.is_error else ''}) {last.text or ''}".strip()
    if kind == TOOL_CALL:
        calls = ", ".join(c.display_name for c in last.tool_calls)
        return f"(calls {calls}) {last.text or ''}".strip()
    if kind == "blank":
        return "(blank reply)"
    return last.text or ""


@hookimpl
def nomos_forensics_rules():
    return [UnfinishedSession]
