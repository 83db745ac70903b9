"""The review card: the runbook's section-5 summary of one session, as data.

Renderers (render.py) turn a Card into text, markdown or JSON; nothing here formats output.
The Outcome is decided in outcome.py (docs/outcome.md, "How the outcome is decided").

A *turn* is one user message and every message after it up to the next user message; messages
before the first user message belong to no turn (turn 0). `Stats.turns` counts turns, and every
format (text, markdown, JSON, HTML) prints that one number.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from .model import Session, excerpt
from .outcome import Outcome, Verdict, decide_outcome, explain_outcome, verdict  # noqa: F401 (the card's API)
from .rule import Finding, Severity

SCHEMA_VERSION = 1
_ROLE = attrgetter("role")


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
        elision = session.elision  # a session held in part: its counts cover every message
        roles = elision.roles if elision is not None else Counter(map(_ROLE, session.messages))
        counts = session.tool_counts
        return cls(
            messages=elision.messages if elision is not None else len(session.messages),
            user_messages=roles.get("user", 0),
            assistant_messages=roles.get("assistant", 0),
            tool_messages=roles.get("tool", 0),
            tool_calls=elision.tool_calls if elision is not None else len(session.tool_calls),
            turns=elision.turns if elision is not None else len(session.turns),
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
    outcome_message: int | None = None  # the id of the message the outcome rests on
    outcome_kind: str = ""  # which step of the outcome decision applied (Verdict.kind)
    notes: list[str] = field(default_factory=list)  # rows read only in part (e.g. unreadable JSON)
    # a failure no finding explains: its unexplained.Reading (group and example); a LEFT_OUT
    # reason when it is one but is not grouped; None otherwise (docs/unexplained.md)
    unexplained: Any = None

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
    def outcome_note(self) -> str | None:
        """One short line when the Outcome and the Severity seem to disagree (`outcome_note`)."""
        severity = self.severity
        if severity == Severity.BLOCKER and self.outcome == Outcome.ACHIEVED:
            blockers = [(f.rule, [e.turn for e in f.evidence]) for f in self.findings if f.severity == severity]
            return outcome_note(self.outcome, severity.label, blockers)
        return outcome_note(self.outcome, severity.label, [])

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
            "outcome_message": self.outcome_message,
            "outcome_note": self.outcome_note,
            "findings": [f.to_json() for f in self.findings],
            "severity": self.severity.label,
            "blockers": self.blockers,
            "fixes": self.fixes,
            "errors": [e.to_json() for e in self.errors],
            "skipped_rules": self.skipped,
            "notes": self.notes,
            "unexplained": self.unexplained.to_json() if hasattr(self.unexplained, "to_json") else None,  # a Reading (not imported: unexplained reads cards)
        }


def outcome_note(outcome: str, severity: str, blockers: list[tuple[str, list[int | None]]]) -> str | None:
    """Why an Outcome and a Severity that seem to disagree both hold, in one line, or None
    (`blockers`: each blocker finding's rule and its evidence's turns). The Outcome reads how the
    session ends; the Severity is its worst finding, wherever it was: a session can end well
    after a blocker, or badly with no finding that names why."""
    if outcome == Outcome.ACHIEVED and severity == Severity.BLOCKER.label:
        turns = [turn for _, found in blockers for turn in found if turn]
        rules = ", ".join(dict.fromkeys(rule for rule, _ in blockers))
        where = f" in turn {min(turns)}" if turns else ""
        return f"achieved, after a blocker{where} ({rules}): the Outcome reads how it ends, the Severity its worst finding"
    if outcome in (Outcome.FAILED, Outcome.PARTIAL) and severity in ("none", Severity.COSMETIC.label):
        return f"{outcome}, but no rule found a cause: the Outcome reads how it ends, the Severity its worst finding"
    return None


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
