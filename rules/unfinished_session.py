"""unfinished-session: the transcript stops in a non-terminal state, with no final answer."""

from __future__ import annotations

from collections.abc import Iterator

from nomos_forensics.rulekit import (
    ERROR,
    TOOL_CALL,
    TOOL_RESULT,
    USER,
    Finding,
    Message,
    Rule,
    Session,
    Severity,
    excerpt,
    hookimpl,
)


class UnfinishedSession(Rule):
    """The transcript ends without a final assistant answer: the state "Continue" exists for.

    Detects: the last user, assistant or tool message (trailing system messages are ignored)
    is one of: a tool result (a `tool` message, or an assistant message carrying only
    `tool_results`); an assistant message with tool calls whose results were never stored; a
    user message nobody answered; an assistant error card; a blank assistant reply (the release
    treats an empty response as non-terminal); a reply the user cut off: the client logged its
    interrupt right before the final reply (aider's "^C again to exit", written on the first ^C
    while the model streams, before the partial reply; heldout7), or right before the token
    report of a model call made after it (a retry of a failed edit cut before its first word). A session whose status is `active` and whose
    last message is younger than the `grace-minutes` setting (default 10) is still running and
    is left alone; an `active` session stuck longer, and any `idle` one, is reported. The fix
    names where and on what the session stopped (the tool whose result got no reply, the
    unanswered message, the error card's text).
    Not flagged: a run that ends on its finishing step: a `complete_task` call or its result, a
    submit tool (`submit`, `finish`, `attempt_completion`, ...) with or without a result, or the
    last tool call of a session whose status is `completed` (a mini-swe-agent run on SWE-bench
    ends on `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat patch.txt`, which the harness
    never answers, and is stored `completed`); a designed hand-off to a person whose result
    is stored and no error (`transfer_to_human_agents` → "Transfer successful"); a closing
    after a finished answer: a bare thank-you, acknowledgement or goodbye ("thanks!", "great,
    thank you", "bye"; "ok" or "no" only when the assistant had not asked a question; "no,
    that's all", "goodbye" and a simulated user's "###STOP###" even after one), or an empty
    input (an aider session that ends on an empty prompt after "Applied edit to index.html"), or
    "exit" typed to aider's prompt; a ^C at the prompt after a finished reply (aider logs the
    reply's token report, then "^C again to exit" and "^C KeyboardInterrupt": the user quit); a
    cut-off reply to a closing typed after a finished answer ("exit", then the model's
    half-written reply to it).
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
                           [(last, _excerpt_for(ending.kind, last))],
                           fix=_fix_for(ending.kind, last, session.info.status, ending.cut_off))


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


def _fix_for(kind: str, last: Message, status: str | None, cut_off: Message | None = None) -> str:
    """The fix for this session: where and on what it stopped, and what resumes it."""
    where = f"turn {last.turn}"
    state = f" (status `{status}`)" if isinstance(status, str) and status.strip() else ""
    if cut_off is not None:
        return (f"the reply in {where} was cut off by the user's interrupt (the client logged "
                f"\"{excerpt(cut_off.text, 40)}\"){state} and nothing answered after it: find out why the user stopped it "
                f"(too slow, the wrong track), then re-send the request or resume the session (\"Continue\").")
    if kind == TOOL_RESULT:
        names = [last.tool_name] if last.role == "tool" else [r.name for r in last.tool_results]
        tool = ", ".join(f"`{n}`" for n in names if n) or "a tool"
        return (f"{where} stops on the result of {tool}{state} with no reply after it: resume the session "
                f"(\"Continue\" / auto-resume on a non-terminal ending) and make the agent answer after every tool round.")
    if kind == TOOL_CALL:
        calls = ", ".join(f"`{c.display_name}`" for c in last.tool_calls[:3])
        return (f"{where} stops on a call to {calls}{state} whose result was never stored: the stream or the server "
                f"dropped mid-call; let the SSE auto-reconnect resume it, and persist a result or an error card for every call.")
    if kind == USER:
        return (f"the user's message in {where} (\"{excerpt(last.text, 60)}\") got no reply{state}: resume the session "
                f"(\"Continue\") and persist an error card when a turn dies before answering.")
    if kind == ERROR:
        return (f"{where} died on an error card (\"{excerpt(last.error, 80)}\"){state}: fix its cause, then retry the "
                f"completion and resume the session (\"Continue\").")
    return (f"{where} ends on a blank reply{state}: retry the completion (up to 3x) and resume the session on an "
            f"empty response instead of leaving it as the last word.")


@hookimpl
def nomos_forensics_rules():
    return [UnfinishedSession]
