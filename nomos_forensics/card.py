"""The review card: the runbook's section-5 summary of one session, as data.

Renderers (render.py) turn a Card into text, markdown or JSON; nothing here formats output.
The outcome decision is documented in the README ("How the outcome is decided").
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from .model import Message, Session, excerpt
from .rule import Finding, Severity

SCHEMA_VERSION = 1
COMPLETION_TOOLS = ("complete_task",)


class Outcome:
    ACHIEVED = "achieved"
    FAILED = "failed"
    PARTIAL = "partial"
    UNKNOWN = "unknown"

    SYMBOL = {ACHIEVED: "✅", FAILED: "❌", PARTIAL: "⚠️", UNKNOWN: "❔"}


@dataclass
class RuleError:
    rule: str
    type: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"rule": self.rule, "type": self.type, "message": self.message}


@dataclass
class Stats:
    messages: int
    user_messages: int
    assistant_messages: int
    tool_messages: int
    tool_calls: int
    turns: int
    turns_with_tool_calls: int
    unique_tools: int
    top_tools: list[tuple[str, int]]

    @classmethod
    def of(cls, session: Session, top: int = 5) -> "Stats":
        roles = Counter(m.role for m in session.messages)
        counts = session.tool_counts
        return cls(
            messages=len(session.messages),
            user_messages=roles.get("user", 0),
            assistant_messages=roles.get("assistant", 0),
            tool_messages=roles.get("tool", 0),
            tool_calls=len(session.tool_calls),
            turns=len(session.turns),
            turns_with_tool_calls=session.turns_with_tool_calls,
            unique_tools=len(counts),
            top_tools=sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top],
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "user_messages": self.user_messages,
            "assistant_messages": self.assistant_messages,
            "tool_messages": self.tool_messages,
            "tool_calls": self.tool_calls,
            "turns": self.turns,
            "turns_with_tool_calls": self.turns_with_tool_calls,
            "unique_tools": self.unique_tools,
            "top_tools": [{"name": n, "count": c} for n, c in self.top_tools],
        }


@dataclass
class Card:
    session: Session
    stats: Stats
    objective: str
    outcome: str
    findings: list[Finding] = field(default_factory=list)
    errors: list[RuleError] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)  # rules not run, with the reason
    notes: list[str] = field(default_factory=list)  # rows read only in part (e.g. unreadable JSON)

    @property
    def severity(self) -> Severity:
        return max((f.severity for f in self.findings), default=Severity.NONE)

    @property
    def blockers(self) -> list[str]:
        seen: list[str] = []
        for finding in self.findings:
            if finding.blocker and finding.blocker not in seen:
                seen.append(finding.blocker)
        return seen

    @property
    def fixes(self) -> list[str]:
        seen: list[str] = []
        for finding in sorted(self.findings, key=lambda f: -f.severity):
            if finding.fix and finding.fix not in seen:
                seen.append(finding.fix)
        return seen

    def to_json(self) -> dict[str, Any]:
        info = self.session.info
        return {
            "schema_version": SCHEMA_VERSION,
            "session": {
                "id": info.id,
                "title": info.title,
                "created_at": info.created_at.isoformat() if info.created_at else None,
                "status": info.status,
                "model": info.model,
            },
            "stats": self.stats.to_json(),
            "objective": self.objective,
            "outcome": self.outcome,
            "findings": [f.to_json() for f in self.findings],
            "severity": self.severity.label,
            "blockers": self.blockers,
            "fixes": self.fixes,
            "errors": [e.to_json() for e in self.errors],
            "skipped_rules": self.skipped,
            "notes": self.notes,
        }


def objective_of(session: Session) -> str:
    """The session goal when set, else the first user message, condensed to one line."""
    goal = session.info.goal
    if goal and goal.strip():
        return excerpt(goal, 160)
    for message in session.messages:
        if message.role == "user" and message.has_text:
            return excerpt(message.text, 160)
    title = session.info.title
    return excerpt(title, 160) if title and title.strip() else "(no user message)"


def decide_outcome(session: Session, findings: list[Finding]) -> str:
    """achieved / failed / partial / unknown, from the transcript's ending, status and findings.

    The *ending* is the last user, assistant or tool message (system messages are ignored).
    *Completed* means a `complete_task` call whose stored result is not an error, or status
    `completed`. The first of these that applies decides:

    1. unknown: no user message, or no assistant message (nothing to judge).
    2. unknown: status `active` and the last message is under 10 minutes old (still running).
    3. failed: status `failed`; or the ending is an assistant error card or a blank assistant
       reply (empty final reply); or a blocker finding (refusal, empty reply, blocked action,
       ...) has evidence in the last turn after which the agent did no more work in that turn
       (no tool call other than `complete_task`: marking a refused task complete is no rescue).
    4. partial: the ending is unfinished: a tool result or a tool call nobody answered (unless
       that last round called `complete_task`), or a user message without a reply (a bare
       thank-you after a finished answer excepted); or status `cancelled` and not completed.
    5. partial: any finding of severity friction or blocker (done, but with friction, or a
       blocker the agent got past).
    6. achieved: completed.
    7. unknown: the final reply is a short question (under 300 characters, ending in "?") in a
       turn where the agent called no tool: it is waiting on the user.
    8. achieved: the final reply answers with text.

    Cosmetic findings never change the outcome.
    """
    if not session.by_role("user") or not session.by_role("assistant"):
        return Outcome.UNKNOWN
    conversation = [m for m in session.messages if m.role in ("user", "assistant", "tool")]
    last = conversation[-1]
    status = (session.info.status or "").strip().lower()
    if status == "active" and _recent(last.created_at):
        return Outcome.UNKNOWN
    ending = _ending(conversation)
    last_turn = [m for m in conversation if m.turn == last.turn]
    last_turn_calls = {c.name for m in last_turn for c in m.tool_calls}
    ended_by_blocker = any(
        _unrecovered(e.message_id, last_turn)
        for f in findings if f.severity == Severity.BLOCKER
        for e in f.evidence if e.turn == last.turn
    )
    if status == "failed" or ending in ("error", "blank") or ended_by_blocker:
        return Outcome.FAILED
    completed = status == "completed" or _completed_by_call(session)
    if ending == "unfinished" or (status == "cancelled" and not completed):
        return Outcome.PARTIAL
    if any(f.severity >= Severity.FRICTION for f in findings):
        return Outcome.PARTIAL
    if completed:
        return Outcome.ACHIEVED
    text = (last.text or "").strip()
    if ending == "answered" and text.endswith(("?", "\uff1f")) and len(text) < 300 and not last_turn_calls:
        return Outcome.UNKNOWN
    return Outcome.ACHIEVED


_THANKS = re.compile(
    r"thank|thx|\bty\b|cheers|danke|merci|gracias|obrigad|grazie|dank je|спасибо|благодар|dzięk|teşekkür"
    r"|谢|ありがと|감사|고마",
    re.IGNORECASE,
)
_CLOSING_WORDS = frozenset(
    "thanks thank you so much very a lot many great ok okay perfect cool nice awesome cheers again"
    " danke schön sehr merci beaucoup gracias muchas obrigado obrigada grazie mille спасибо большое".split()
)
IN_FLIGHT = timedelta(minutes=10)


def _bare_thanks(text: str | None) -> bool:
    """A thank-you with nothing else to do in it ("thanks!", "great, thank you so much")."""
    if not text or not _THANKS.search(text):
        return False
    words = re.findall(r"\w+", text.lower())
    return len(text) <= 12 or all(w in _CLOSING_WORDS for w in words)


def _ending(conversation: list[Message]) -> str:
    """answered, completed, error, blank or unfinished: how the conversation stops."""
    last = conversation[-1]
    if last.role == "user":
        before = conversation[:-1]
        if _bare_thanks(last.text) and before and _ending(before) in ("answered", "completed"):
            return "answered"
        return "unfinished"
    if last.role == "assistant" and last.error:
        return "error"
    if last.role == "assistant" and last.has_text and not last.tool_calls:
        return "answered"
    if last.role == "assistant" and not last.tool_calls and not last.tool_results:
        return "blank"
    for message in reversed(conversation):  # the last tool-call round: did it complete the task?
        if message.tool_calls:
            done = any(c.name in COMPLETION_TOOLS for c in message.tool_calls)
            return "completed" if done else "unfinished"
    return "unfinished"


def _unrecovered(message_id: int | None, turn: list[Message]) -> bool:
    """No work (a tool call other than complete_task) follows the blocker's message in its turn."""
    ids = [m.id for m in turn]
    after = turn[ids.index(message_id) + 1:] if message_id in ids else []
    return not any(c.name not in COMPLETION_TOOLS for m in after for c in m.tool_calls)


def _completed_by_call(session: Session) -> bool:
    """A complete_task call whose first stored result after it is not an error."""
    pending = False
    for message in session.messages:
        if any(c.name in COMPLETION_TOOLS for c in message.tool_calls):
            pending = True
            continue
        if not pending:
            continue
        results = [(message.tool_name, message.is_error)] if message.role == "tool" else [
            (r.name, r.is_error) for r in message.tool_results
        ]
        for name, is_error in results:
            if name in COMPLETION_TOOLS:
                if not is_error:
                    return True
                pending = False
    return pending


def _recent(moment: datetime | None) -> bool:
    if moment is None:
        return False
    now = datetime.now(timezone.utc) if moment.tzinfo else datetime.now()
    return abs(now - moment) < IN_FLIGHT
