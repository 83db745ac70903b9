"""The review card: the runbook's section-5 summary of one session, as data.

Renderers (render.py) turn a Card into text, markdown or JSON; nothing here formats output.
The outcome decision is documented in the README ("How the outcome is decided").
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from .ending import BLANK, COMPLETION_TOOLS, CONVERSATION_ROLES, DEFAULT_GRACE, ERROR
from .model import Message, Session, excerpt
from .rule import Finding, Severity

SCHEMA_VERSION = 1


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
    outcome_reason: str = ""  # the one line that says why the outcome is what it is
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
            "outcome_reason": self.outcome_reason,
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


def decide_outcome(session: Session, findings: list[Finding], grace: timedelta = DEFAULT_GRACE) -> str:
    """achieved / failed / partial / unknown, from the transcript's ending, status and findings.

    The *ending* is the last user, assistant or tool message (system messages are ignored).
    *Completed* means a `complete_task` call whose stored result is not an error, or status
    `completed`. The first of these that applies decides:

    1. unknown: no user message, or no assistant message (nothing to judge).
    2. unknown: status `active` and the last message is younger than `grace-minutes`
       (default 10; still running).
    3. failed: status `failed`; or the ending is an assistant error card or a blank assistant
       reply (empty final reply); or a blocker finding (refusal, empty reply, blocked action,
       ...) has evidence in the last turn after which the agent did no more work in that turn
       (no tool call other than `complete_task`: marking a refused task complete is no rescue).
    4. partial: the ending is unfinished: a tool result or a tool call nobody answered (unless
       that last round called `complete_task`), or a user message without a reply (a closing
       thank-you or acknowledgement after a finished answer excepted); or status `cancelled`
       and not completed.
    5. partial: any finding of severity friction or blocker (done, but with friction, or a
       blocker the agent got past).
    6. achieved: completed.
    7. unknown: the final reply is a short question (under 300 characters, ending in "?") in a
       turn where the agent called no tool: it is waiting on the user.
    8. achieved: the final reply answers with text.

    Cosmetic findings never change the outcome.
    """
    return explain_outcome(session, findings, grace)[0]


def explain_outcome(
    session: Session, findings: list[Finding], grace: timedelta = DEFAULT_GRACE
) -> tuple[str, str]:
    """(outcome, why): `decide_outcome`'s answer and the one line that says which rule decided it."""
    users, assistants = session.by_role("user"), session.by_role("assistant")
    if not users or not assistants:
        return Outcome.UNKNOWN, "no user message" if not users else "no assistant reply"
    ending = session.ending
    last = ending.last
    if ending.in_flight(grace):
        return Outcome.UNKNOWN, f"still running: status active and the last message (turn {last.turn}) is recent"
    last_turn = [m for m in session.messages if m.turn == last.turn and m.role in CONVERSATION_ROLES]
    blocker = next((
        f for f in findings if f.severity == Severity.BLOCKER
        and any(e.turn == last.turn and _unrecovered(e.message_id, last_turn) for e in f.evidence)
    ), None)
    failed = [
        *(["status failed"] if ending.status == "failed" else []),
        *([f"ends on {ending.describe()} in turn {last.turn}"] if ending.kind in (ERROR, BLANK) else []),
        *([f"{blocker.rule} in the last turn ({last.turn}), no work after it"] if blocker is not None else []),
    ]
    if failed:
        return Outcome.FAILED, "; ".join(failed)
    if not ending.finished:
        return Outcome.PARTIAL, f"ends on {ending.describe()} in turn {last.turn}"
    if ending.status == "cancelled" and not ending.completed:
        return Outcome.PARTIAL, "cancelled before the task was completed"
    frictions = sorted({f.rule for f in findings if f.severity >= Severity.FRICTION})
    if frictions:
        return Outcome.PARTIAL, f"finished, with {', '.join(frictions)}"
    if ending.completion is not None:
        return Outcome.ACHIEVED, f"complete_task succeeded in turn {ending.completion.turn}"
    if ending.completed:
        return Outcome.ACHIEVED, "status completed"
    text = (last.text or "").strip()
    asks = text.endswith(("?", "\uff1f")) and len(text) < 300
    if ending.answer is not None and asks and not any(m.tool_calls for m in last_turn):
        return Outcome.UNKNOWN, f"the last reply, in turn {last.turn}, asks the user a question"
    closed = "; the user closed with thanks" if ending.closing is not None else ""
    return Outcome.ACHIEVED, f"answered in turn {last.turn if ending.closing is None else last.turn - 1}{closed}"


def _unrecovered(message_id: int | None, turn: list[Message]) -> bool:
    """No work (a tool call other than complete_task) follows the blocker's message in its turn."""
    ids = [m.id for m in turn]
    after = turn[ids.index(message_id) + 1:] if message_id in ids else []
    return not any(c.name not in COMPLETION_TOOLS for m in after for c in m.tool_calls)
