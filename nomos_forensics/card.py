"""The review card: the runbook's section-5 summary of one session, as data.

Renderers (render.py) turn a Card into text, markdown or JSON; nothing here formats output.
The outcome decision is documented in the README ("How the outcome is decided").
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .model import Session, excerpt
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
    """achieved / failed / partial / unknown, from completion signals, the ending and findings.

    1. No user message, or no assistant message at all: unknown.
    2. failed: status `failed`, or a blocker finding has evidence in the last turn (a refusal,
       an empty final reply, a blocked action that ended the session), or the last message is
       an assistant error card.
    3. completed = a `complete_task` call or status `completed`; answered = the last message is
       an assistant reply with text. Neither (the transcript ends on a tool result or a user
       message): partial (unfinished), or unknown when nothing happened at all.
    4. completed or answered, with any blocker or friction finding: partial.
    5. completed or answered, with only cosmetic findings or none: achieved.
    """
    if not session.by_role("user") or not session.by_role("assistant"):
        return Outcome.UNKNOWN
    last_turn = session.turns[-1].number if session.turns else 0
    status = (session.info.status or "").strip().lower()
    last = session.messages[-1]
    ended_by_blocker = any(
        f.severity == Severity.BLOCKER and any(e.turn == last_turn for e in f.evidence)
        for f in findings
    )
    if status == "failed" or ended_by_blocker or (last.role == "assistant" and last.error):
        return Outcome.FAILED
    completed = status == "completed" or session.called(*COMPLETION_TOOLS)
    answered = last.role == "assistant" and last.has_text and not last.tool_calls
    if not (completed or answered):
        return Outcome.PARTIAL
    if any(f.severity >= Severity.FRICTION for f in findings):
        return Outcome.PARTIAL
    return Outcome.ACHIEVED
