"""What a rule is: metadata on a class, a `check` generator of findings, and the finding types.

A rule's docstring has a summary line and the fixed sections `Detects:`, `Root cause:` and
`Fix:`; findings take their root cause and fix from it, and docs/rules.md is generated from it.
"""

from __future__ import annotations

import enum
import inspect
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from .model import Message, excerpt

if TYPE_CHECKING:
    from .model import Session


class Severity(enum.IntEnum):
    """Ordered severities; `none` only ever describes a card without findings."""

    NONE = 0
    COSMETIC = 1
    FRICTION = 2
    BLOCKER = 3

    @classmethod
    def parse(cls, value: "str | Severity") -> "Severity":
        if isinstance(value, Severity):
            return value
        try:
            return cls[str(value).strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {value!r} (blocker, friction, cosmetic)") from None

    @property
    def label(self) -> str:
        return self.name.lower()


class Need(str, enum.Enum):
    """Data a rule reads; the engine fetches only what the selected rules need."""

    MESSAGES = "messages"  # slim messages: text, tool-call names, roles, error, sizes
    CONTENT = "content"  # full normalised content of every message (tool outputs, arguments)
    AUDIT = "audit_log"
    PLANS = "plans"  # nomos_plans + nomos_plan_steps
    EXECUTIONS = "executions"  # nomos_plan_executions


@dataclass(frozen=True, slots=True)
class Evidence:
    message_id: int | None
    turn: int | None
    excerpt: str

    def to_json(self) -> dict[str, Any]:
        return {"message_id": self.message_id, "turn": self.turn, "excerpt": self.excerpt}


@dataclass(slots=True)
class Finding:
    rule: str
    code: str
    severity: Severity
    message: str
    root_cause: str
    fix: str
    evidence: list[Evidence] = field(default_factory=list)
    blocker: str | None = None  # the line this finding adds to the card's "Blockers", if any
    data: dict[str, Any] = field(default_factory=dict)  # structured details (counts, sizes, tools)

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "code": self.code,
            "severity": self.severity.label,
            "message": self.message,
            "root_cause": self.root_cause,
            "fix": self.fix,
            "evidence": [e.to_json() for e in self.evidence],
            "data": self.data,
        }


_SECTION = re.compile(r"^(Detects|Why it matters|Root cause|Fix|Config):\s*$|^(Detects|Why it matters|Root cause|Fix|Config):\s+(.*)$")


def docstring_sections(doc: str | None) -> dict[str, str]:
    """Split a rule docstring into summary + named sections (section bodies joined to one paragraph)."""
    text = inspect.cleandoc(doc or "")
    lines = text.splitlines()
    sections: dict[str, list[str]] = {"summary": []}
    current = "summary"
    for line in lines:
        match = _SECTION.match(line.strip())
        if match:
            current = (match.group(1) or match.group(2)).lower()
            sections[current] = [match.group(3)] if match.group(3) else []
            continue
        sections.setdefault(current, []).append(line.strip())
    return {k: " ".join(" ".join(v).split()) for k, v in sections.items() if " ".join(v).strip()}


class Rule:
    """Base class for rules. Subclasses set the metadata and implement `check`.

    Detects: (override in subclasses)
    Root cause: (override)
    Fix: (override)
    """

    code: ClassVar[str] = ""
    name: ClassVar[str] = ""  # kebab-case, stable, part of the contract
    severity: ClassVar[Severity | str] = Severity.FRICTION
    config: ClassVar[Mapping[str, Any]] = {}  # accepted keys with their defaults
    needs: ClassVar[frozenset[Need]] = frozenset({Need.MESSAGES})
    # data used when the database has it; the rule still runs (and is not skipped) without it
    wants: ClassVar[frozenset[Need]] = frozenset()
    # table -> columns this rule reads; when unmet, the rule is skipped with a reason
    requires: ClassVar[Mapping[str, Iterable[str]]] = {}

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        self.options: dict[str, Any] = dict(self.config)
        unknown = set(options or {}) - set(self.config)
        if unknown:
            raise ValueError(f"rule {self.name}: unknown config key(s) {', '.join(sorted(unknown))}")
        self.options.update(options or {})

    # ----------------------------------------------------------------- metadata
    @classmethod
    def sections(cls) -> dict[str, str]:
        # parsed once per class: every finding carries the rule's root cause and fix
        cached = cls.__dict__.get("_sections")
        if cached is None:
            cached = docstring_sections(cls.__doc__)
            cls._sections = cached
        return cached

    @classmethod
    def summary(cls) -> str:
        return cls.sections().get("summary", "")

    @classmethod
    def root_cause(cls) -> str:
        return cls.sections().get("root cause", "")

    @classmethod
    def fix(cls) -> str:
        return cls.sections().get("fix", "")

    @classmethod
    def default_severity(cls) -> Severity:
        return Severity.parse(cls.severity)

    # ----------------------------------------------------------------- behaviour
    def logical_size_floor(self) -> int | None:
        """Uncompressed jsonb bytes from which this rule needs a message's exact logical size
        (`Message.logical_bytes`); None: never. The engine computes it in SQL for those rows."""
        return None

    def check(self, session: "Session", ctx: "RuleContext") -> Iterator[Finding]:
        """Yield findings for `session`. Must not write; may use ctx.query for read-only SQL."""
        raise NotImplementedError

    def finding(
        self,
        message: str,
        evidence: Iterable[Message | Evidence | tuple[Message, str]] = (),
        *,
        severity: Severity | str | None = None,
        blocker: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> Finding:
        """A finding of this rule; evidence items may be Messages (excerpt from their text)."""
        items: list[Evidence] = []
        for item in evidence:
            if isinstance(item, Evidence):
                items.append(item)
            elif isinstance(item, tuple):
                msg, text = item
                items.append(Evidence(msg.id, msg.turn, excerpt(text)))
            else:
                items.append(Evidence(item.id, item.turn, excerpt(item.text or item.error or "")))
        sev = Severity.parse(severity) if severity is not None else self.default_severity()
        return Finding(
            rule=self.name,
            code=self.code,
            severity=sev,
            message=message,
            root_cause=self.root_cause(),
            fix=self.fix(),
            evidence=items,
            blocker=blocker if blocker is not None else (message if sev == Severity.BLOCKER else None),
            data=dict(data or {}),
        )


class RuleContext:
    """What a rule may use besides the session: its options and a read-only query helper."""

    def __init__(self, query=None, schema=None) -> None:
        self._query = query
        self.schema = schema

    def query(self, sql: str, params: Mapping[str, Any] | None = None) -> list[Mapping[str, Any]]:
        """Run one read-only statement with bound parameters; rows as mappings."""
        if self._query is None:
            raise RuntimeError("no database available to this rule")
        return self._query(sql, params or {})


RULE_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
