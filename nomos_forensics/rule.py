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
from datetime import timedelta
from typing import TYPE_CHECKING, Any, ClassVar

from .ending import DEFAULT_GRACE
from .fixes import nomos_names
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
    # read from the platform's records (audit log, plans, executions), or a blocker read from the
    # tool record (Rule.reads_tool_record), which say how the session ended: the card's Outcome
    # weighs these; it reads the conversation itself, and of the text findings only
    # user-frustration's failure reports in the last requests (outcome.py, step 20)
    from_records: bool = False
    evidence_omitted: int = 0  # evidence items left out by the card's bounds (bounds.py)
    fix_source: str = "rule"  # "config": the operator's own fix text for this rule (`[fixes]`)

    def to_json(self) -> dict[str, Any]:
        shown = {
            "rule": self.rule,
            "code": self.code,
            "severity": self.severity.label,
            "message": self.message,
            "root_cause": self.root_cause,
            "fix": self.fix,
            "fix_source": self.fix_source,
            "fix_nomos": nomos_names(self.fix) if self.fix_source == "rule" else [],
            "evidence": [e.to_json() for e in self.evidence],
            "data": self.data,
        }
        if self.evidence_omitted:
            shown["evidence_omitted"] = self.evidence_omitted
        return shown


_KINDS = {int: "an integer", float: "a number", str: "a string", bool: "true or false", list: "a list of strings"}


@dataclass(frozen=True)
class Option:
    """One configuration key of a rule: its type, default, description and bounds.

    Declared on the rule class (`config = {"max_calls": Option(30, "…", minimum=1)}`) and
    validated once, when the rule is built at start-up; `check()` reads converted values from
    `self.options`. `kind` is the default's type unless given: int, float, str, bool, or list
    (of strings). A plain value in `config` is an untyped option: taken as given.
    """

    default: Any
    description: str = ""
    kind: type | None = None
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[Any, ...] | None = None

    @property
    def type(self) -> type | None:
        if self.kind is not None:
            return self.kind
        if isinstance(self.default, bool):
            return bool
        return type(self.default) if isinstance(self.default, (int, float, str, list, tuple)) else None

    @property
    def type_name(self) -> str:
        kind = list if self.type is tuple else self.type
        return {int: "integer", float: "number", str: "string", bool: "boolean", list: "list of strings"}.get(
            kind, "any")

    def convert(self, value: Any) -> Any:
        """The value as this option's type; ValueError saying what was expected otherwise."""
        kind = list if self.type is tuple else self.type
        if kind is bool:
            if not isinstance(value, bool):
                raise ValueError(f"expected {_KINDS[bool]}, got {value!r}")
        elif kind is int:
            if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, float) and value.is_integer())):
                raise ValueError(f"expected {_KINDS[int]}, got {value!r}")
            value = int(value)
        elif kind is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value in (
                float("inf"), float("-inf")
            ):
                raise ValueError(f"expected {_KINDS[float]}, got {value!r}")
            value = float(value)
        elif kind is str:
            if not isinstance(value, str):
                raise ValueError(f"expected {_KINDS[str]}, got {value!r}")
        elif kind is list:
            if isinstance(value, str):
                value = value.split(",")
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"expected {_KINDS[list]}, got {value!r}")
            value = list(dict.fromkeys(v.strip() for v in value if v.strip()))
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"must be at least {self.minimum:g}, got {value!r}")
        if self.maximum is not None and value > self.maximum:
            raise ValueError(f"must be at most {self.maximum:g}, got {value!r}")
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"must be one of {', '.join(map(str, self.choices))}, got {value!r}")
        return value

    def to_json(self) -> dict[str, Any]:
        described = {"type": self.type_name, "default": list(self.default) if isinstance(self.default, tuple)
                     else self.default, "description": self.description}
        for key in ("minimum", "maximum"):
            if getattr(self, key) is not None:
                described[key] = getattr(self, key)
        if self.choices is not None:
            described["choices"] = list(self.choices)
        return described


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
    config: ClassVar[Mapping[str, Any]] = {}  # accepted keys: an Option each (or a plain default)
    needs: ClassVar[frozenset[Need]] = frozenset({Need.MESSAGES})
    # data used when the database has it; the rule still runs (and is not skipped) without it
    wants: ClassVar[frozenset[Need]] = frozenset()
    # table -> columns this rule reads; when unmet, the rule is skipped with a reason
    requires: ClassVar[Mapping[str, Iterable[str]]] = {}
    # True for a rule that reads the tool record (results, errors): its blocker findings say how
    # the session ended as the platform's records do, and the card's Outcome weighs them
    reads_tool_record: ClassVar[bool] = False

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        """Validate and convert the configured options (ValueError naming the rule and key)."""
        specs = self.option_specs()
        unknown = set(options or {}) - set(specs)
        if unknown:
            raise ValueError(f"rule {self.name}: unknown config key(s) {', '.join(sorted(unknown))}")
        self.options: dict[str, Any] = {}
        for key, spec in specs.items():
            given = (options or {}).get(key, spec.default)
            try:
                self.options[key] = spec.convert(given) if spec.type is not None else given
            except ValueError as error:
                raise ValueError(f"rule {self.name}: option {key}: {error}") from None

    @classmethod
    def option_specs(cls) -> dict[str, Option]:
        """Every config key as an Option; a plain default in `config` is an untyped one."""
        return {key: value if isinstance(value, Option) else Option(value, kind=object)
                for key, value in cls.config.items()}

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

    def preload(self) -> None:
        """Load now what `check` will only read (a model, a large table), in a process about to
        fork `--jobs` workers, so that they share its memory pages instead of each loading its
        own copy. Optional: the default loads nothing, and an error here is ignored (the workers
        load lazily, as they would anyway)."""

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
        fix: str | None = None,
    ) -> Finding:
        """A finding of this rule; evidence items may be Messages (excerpt from their text).
        `fix` replaces the docstring's stock `Fix:` for this finding (one that names what the
        session shows: the command, the topic); None keeps the stock text."""
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
            fix=fix if fix else self.fix(),
            evidence=items,
            blocker=blocker if blocker is not None else (message if sev == Severity.BLOCKER else None),
            data=dict(data or {}),
            from_records=bool(set(self.needs) - {Need.MESSAGES, Need.CONTENT})
            or (self.reads_tool_record and sev == Severity.BLOCKER),
        )


class RuleContext:
    """What a rule may use besides the session: a read-only query helper, the schema, and
    `grace`, how long an `active` session's last message counts as still running."""

    def __init__(self, query=None, schema=None, grace: timedelta = DEFAULT_GRACE) -> None:
        self._query = query
        self.schema = schema
        self.grace = grace

    def query(self, sql: str, params: Mapping[str, Any] | None = None) -> list[Mapping[str, Any]]:
        """Run one read-only statement with bound parameters; rows as mappings."""
        if self._query is None:
            raise RuntimeError("no database available to this rule")
        return self._query(sql, params or {})


RULE_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
