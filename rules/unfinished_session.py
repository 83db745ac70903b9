"""unfinished-session: the transcript stops in a non-terminal state, with no final answer."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

from nomos_forensics import Finding, Option, Rule, Severity, hookimpl
from nomos_forensics.model import Message, Session

COMPLETION_TOOL = "complete_task"
CONVERSATION_ROLES = ("user", "assistant", "tool")
IN_FLIGHT_STATUSES = ("active",)
THANKS = re.compile(
    r"thank|thx|\bty\b|cheers|danke|merci|gracias|obrigad|grazie|dank je|спасибо|благодар|dzięk|teşekkür"
    r"|谢|ありがと|감사|고마",
    re.IGNORECASE,
)
CLOSING = re.compile(
    r"(?:(?:ok(?:ay)?|great|perfect|awesome|nice|cool|good|super|thanks?|thank you(?: (?:so|very) much)?|thx|ty"
    r"|cheers|danke(?: schön| sehr)?|merci(?: beaucoup)?|gracias|obrigad[oa]|grazie(?: mille)?|dank je(?: wel)?"
    r"|спасибо|благодарю|dzięki|dziękuję|teşekkürler|谢谢|多谢|ありがとう(?:ございます)?|감사합니다|고마워)"
    r"[\s,.!。！]*)+(?:👍|🙏|😊)?"
)


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
    message is less than `grace_minutes` old is still running and is left alone; an `active`
    session stuck longer, and any `idle` one, is reported.
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
    config = {"grace_minutes": Option(10, "how long an `active` session's last message counts as still in flight",
                                      kind=float, minimum=0.0)}

    def check(self, session: Session, ctx) -> Iterator[Finding]:
        ending = transcript_ending(session)
        if ending is None:
            return
        kind, last = ending
        if kind in ("answered", "completed"):
            return
        if self._in_flight(session, last):
            return
        yield self.finding(f"session ends on {DESCRIPTION[kind]} (turn {last.turn})",
                           [(last, _excerpt_for(kind, last))])

    def _in_flight(self, session: Session, last: Message) -> bool:
        if (session.info.status or "").strip().lower() not in IN_FLIGHT_STATUSES:
            return False
        grace = timedelta(minutes=self.options["grace_minutes"])
        stamp = last.created_at
        if stamp is None:
            return False
        now = datetime.now(timezone.utc) if stamp.tzinfo else datetime.now()
        return abs(now - stamp) < grace


DESCRIPTION = {
    "tool-result": "a tool result with no assistant reply after it",
    "tool-call": "an assistant tool call whose result was never stored",
    "user": "a user message with no assistant reply",
    "error": "an assistant error card",
    "blank": "a blank assistant reply",
}


def transcript_ending(session: Session) -> tuple[str, Message] | None:
    """How the conversation ends: (kind, last message), kind one of answered, completed,
    tool-result, tool-call, user, error, blank; None for a session with no conversation."""
    return transcript_ending_of([m for m in session.messages if m.role in CONVERSATION_ROLES])


def transcript_ending_of(conversation: list[Message]) -> tuple[str, Message] | None:
    if not conversation:
        return None
    last = conversation[-1]
    if last.role == "user":
        if _is_closing(last.text) and len(conversation) > 1:
            before = transcript_ending_of(conversation[:-1])
            if before is not None and before[0] in ("answered", "completed") and (
                THANKS.search(last.text or "") or "?" not in (before[1].text or "")[-300:]
            ):
                return "answered", last
        return "user", last
    if last.role == "assistant" and last.error:
        return "error", last
    if last.role == "assistant" and last.has_text and not last.tool_calls:
        return "answered", last
    if last.role == "assistant" and not last.tool_calls and not last.tool_results:
        return "blank", last
    if _ends_after_completion(conversation):
        return "completed", last
    if last.role == "assistant" and last.tool_calls and not last.tool_results:
        return "tool-call", last
    return "tool-result", last


def _is_closing(text: str | None) -> bool:
    """A bare thank-you or acknowledgement, which needs no reply once the task is done."""
    return bool(text) and CLOSING.fullmatch(" ".join(text.strip().lower().split())) is not None


def _ends_after_completion(conversation: list[Message]) -> bool:
    """The last assistant tool call round includes complete_task and only tool results follow it."""
    for message in reversed(conversation):
        if message.tool_calls:
            return any(call.name == COMPLETION_TOOL for call in message.tool_calls)
        if message.role == "assistant" and message.has_text:
            return False
    return False


def _excerpt_for(kind: str, last: Message) -> str:
    if kind == "error":
        return last.error or ""
    if kind == "tool-result":
        names = [last.tool_name] if last.role == "tool" else [r.name for r in last.tool_results]
        label = ", ".join(n or "(unnamed)" for n in names) or "(unnamed)"
        return f"(result of {label}{', error' if last.is_error else ''}) {last.text or ''}".strip()
    if kind == "tool-call":
        calls = ", ".join(c.display_name for c in last.tool_calls)
        return f"(calls {calls}) {last.text or ''}".strip()
    if kind == "blank":
        return "(blank reply)"
    return last.text or ""


@hookimpl
def nomos_forensics_rules():
    return [UnfinishedSession]
