"""The engine: select and configure rules, read sessions, run rules in isolation, build cards."""

from __future__ import annotations

import contextlib
import re
import sys
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import sqlalchemy as sa

from .bounds import DEFAULT_BOUNDS, Bounds, bound_card_evidence, bound_finding, bounded_notes, data_problem
from .card import Card, RuleError, Stats, objective_of, verdict
from .config import Config
from .db import Database
from .ending import DEFAULT_GRACE
from .errors import Activity, AmbiguousSession, ConfigError, InvalidSessionId, SessionNotFound, reraise_interrupt
from .model import MESSAGE_COLUMNS, Session, SessionInfo, build_session, message_from_row
from .plugins import Registry, RuleSpec
from .rule import Evidence, Finding, Need, Rule, RuleContext, Severity
from .schema import SchemaReport
from .unexplained import read as read_failure

UUID_RE = re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.I)
PREFIX_RE = re.compile(r"^[0-9a-f]{4,}(-[0-9a-f]*)*$", re.I)
MIN_PREFIX = 4
UUID_GROUPS = ((0, 8), (8, 12), (12, 16), (16, 20), (20, None))  # hex digits of each dash-separated group
MAX_CANDIDATES = 10
# logical_bytes is computed in SQL only for messages whose uncompressed jsonb size reaches a
# floor the rules ask for (Rule.logical_size_floor); NEVER when no rule needs it
NEVER = 2**31 - 1

UNREADABLE_NOTE = "is JSON nested too deeply to read; read as empty"

# lifecycle data: which tables each Need reads
NEED_TABLES: dict[Need, dict[str, tuple[str, ...]]] = {
    Need.AUDIT: {"audit_log": ("session_id",)},
    Need.PLANS: {"nomos_plans": ("id", "session_id"), "nomos_plan_steps": ("plan_id", "seq")},
    Need.EXECUTIONS: {"nomos_plan_executions": ("session_id",)},
}


@dataclass
class ActiveRule:
    spec: RuleSpec
    rule: Rule


@dataclass
class RuleSet:
    """The selected, configured rules, plus what was skipped and why."""

    active: list[ActiveRule] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    problems: list[RuleError] = field(default_factory=list)  # plugin load problems
    grace: timedelta = DEFAULT_GRACE  # an `active` session younger than this is still running
    bounds: Bounds = DEFAULT_BOUNDS  # what one card may hold (bounds.py)
    fixes: dict[str, str] = field(default_factory=dict)  # rule name -> the operator's fix text (config `[fixes]`)

    @property
    def needs(self) -> set[Need]:
        """What to load: every rule's needs, plus its wants (loaded only where the schema allows)."""
        return {need for a in self.active for need in (*a.rule.needs, *a.rule.wants)}

    def preload(self) -> None:
        """Before forking `--jobs` workers: each active rule's `preload()` (errors ignored: a
        rule that cannot preload still loads what it needs in each worker; a print() goes to
        stderr, as in `check`)."""
        with contextlib.redirect_stdout(sys.stderr):
            for active in self.active:
                try:
                    active.rule.preload()
                except BaseException as error:
                    reraise_interrupt(error)
                    continue

    @property
    def logical_floor(self) -> int:
        """Uncompressed jsonb size from which SQL computes a message's exact logical size."""
        floors = [f for a in self.active if (f := a.rule.logical_size_floor()) is not None]
        return min([*floors, NEVER])


def _matches(spec: RuleSpec, selector: str) -> bool:
    s = selector.strip().lower()
    return s in ("all", spec.code.lower(), spec.name.lower()) or (
        len(s) >= 2 and spec.code.lower().startswith(s) and not s.isalpha()
    )


def build_ruleset(
    registry: Registry,
    config: Config,
    *,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    schema: SchemaReport | None = None,
) -> RuleSet:
    """Apply selection (CLI over config), per-rule options, and schema requirements."""
    ruleset = RuleSet(problems=[RuleError(p.source, "PluginLoadError", p.message) for p in registry.problems],
                      grace=timedelta(minutes=config.grace_minutes), bounds=config.bounds)
    selectors = list(select) or list(config.select)
    ignores = [*config.ignore, *ignore]
    for selector in [*selectors, *ignores]:
        if not any(_matches(spec, selector) for spec in registry.rules):
            ruleset.warnings.append(f"unknown rule {selector!r} in --select/--ignore; ignored")
    known = {key for spec in registry.rules for key in (spec.name.lower(), spec.code.lower())}
    for key in config.rules:
        if key.lower() not in known:
            ruleset.warnings.append(f"{config.source}: options for unknown rule {key!r}; ignored")
    for key in config.fixes:
        if key.lower() not in known:
            ruleset.warnings.append(f"{config.source}: a fix for unknown rule {key!r}; ignored")
    for spec in registry.rules:
        if selectors and not any(_matches(spec, s) for s in selectors):
            continue
        if any(_matches(spec, s) for s in ignores):
            continue
        try:
            rule = spec.cls(config.options_for(spec.name, spec.code))
        except ValueError as error:
            raise ConfigError(str(error)) from None
        except BaseException as error:  # a plugin rule that cannot even be built is a rule error
            reraise_interrupt(error)
            ruleset.problems.append(RuleError(spec.name, type(error).__name__, str(error)))
            continue
        try:
            floor = rule.logical_size_floor()
            if floor is not None and (isinstance(floor, bool) or not isinstance(floor, int)):
                raise TypeError(f"logical_size_floor() returned {floor!r:.40}, not an int or None")
        except BaseException as error:
            reraise_interrupt(error)
            ruleset.problems.append(RuleError(spec.name, type(error).__name__, str(error)))
            continue
        if schema is not None:
            reasons = schema.unmet(_requirements(rule))
            if reasons:
                ruleset.skipped.append({"rule": spec.name, "code": spec.code, "reason": "; ".join(reasons)})
                continue
        ruleset.active.append(ActiveRule(spec, rule))
        fix = config.fix_for(spec.name, spec.code)
        if fix is not None:
            ruleset.fixes[spec.name] = fix
    return ruleset


def _requirements(rule: Rule) -> dict[str, tuple[str, ...]]:
    required: dict[str, set[str]] = {}
    for need in rule.needs:
        for table, columns in NEED_TABLES.get(need, {}).items():
            required.setdefault(table, set()).update(columns)
    for table, columns in (rule.requires or {}).items():
        required.setdefault(table, set()).update(columns)
    return {t: tuple(sorted(c)) for t, c in required.items()}


# ------------------------------------------------------------------ reading sessions
def resolve_session_id(db: Database, conn: sa.Connection, ref: str) -> str:
    """A full uuid, or the unique session whose id starts with `ref` (at least 4 hex chars)."""
    value = (ref or "").strip().lower()
    if UUID_RE.match(value):
        rows = db.query(conn, "session_row", {"session_id": value}, purpose="looking up the session")
        if not rows:
            raise SessionNotFound(f"no session with id {value}")
        return rows[0].id
    if not PREFIX_RE.match(value):
        raise InvalidSessionId(
            f"invalid session id {ref[:60]!r}: give a uuid or a prefix of at least {MIN_PREFIX} hex characters"
        )
    rows = db.query(
        conn,
        "session_by_prefix",
        {"prefix": _dashed(value), "max_candidates": MAX_CANDIDATES},
        purpose="resolving the session prefix",
    )
    rows = list({row.id: row for row in rows}.values())  # a view may list a session twice
    if not rows:
        raise SessionNotFound(f"no session id starts with {value!r}")
    if len(rows) > 1:
        width = distinct_width([r.id for r in rows])
        shown = ", ".join(f"{r.id[:width]} ({(r.title or '').strip()[:30] or 'untitled'})" for r in rows[:MAX_CANDIDATES])
        more = " and more" if len(rows) > MAX_CANDIDATES else ""
        raise AmbiguousSession(f"session prefix {value!r} is ambiguous: {shown}{more}")
    return rows[0].id


def distinct_width(ids: list[str], least: int = 13) -> int:
    """The shortest prefix length (at least `least`) at which every id of `ids` differs."""
    width = least
    while width < max(map(len, ids), default=0) and len({i[:width] for i in ids}) < len(set(ids)):
        width += 1
    return width


def _dashed(prefix: str) -> str:
    """A hex prefix with the dashes where a uuid's text has them (`c0a1e5a15e55` -> `c0a1e5a1-5e55`)."""
    digits = prefix.replace("-", "")
    return "-".join(digits[start:end] for start, end in UUID_GROUPS if digits[start:end])


# what a session row's short fields may hold once read: a megabyte title is a title cut short
INFO_CHARS = {"title": 1000, "status": 200, "model": 200, "goal": 20_000}


def session_info_from_row(row: Mapping[str, Any]) -> SessionInfo:
    return SessionInfo(
        id=str(row["id"]),
        title=_short(row.get("title"), INFO_CHARS["title"]),
        status=_short(row.get("status"), INFO_CHARS["status"]),
        goal=_short(row.get("goal"), INFO_CHARS["goal"]),
        model=_short(row.get("model"), INFO_CHARS["model"]),
        created_at=row.get("created_at"),
        updated_at=row.get("updated_at"),
    )


def _short(value: Any, limit: int) -> Any:
    return value[: limit - 1] + "…" if isinstance(value, str) and len(value) > limit else value


def load_session(
    db: Database,
    conn: sa.Connection,
    session_id: str,
    *,
    needs: Iterable[Need],
    schema: SchemaReport | None = None,
    logical_floor: int = NEVER,
) -> Session:
    needs = set(needs)
    rows = db.query(conn, "session_row", {"session_id": session_id}, purpose="reading the session")
    if not rows:
        raise SessionNotFound(f"no session with id {session_id}")
    info = session_info_from_row(rows[0]._mapping)
    params = {"session_id": session_id, "full_content": Need.CONTENT in needs, "logical_floor": logical_floor}
    keep = Need.CONTENT in needs
    with db.translate_errors("reading the session's messages"):
        # a named cursor: a session of a million messages is read in pages, never held as rows
        rows = db.stream(conn, "session_messages", params, columns=MESSAGE_COLUMNS)
        session = build_session(info, (message_from_row(r, keep_content=keep) for r in rows))
    load_extras(db, conn, session, needs, schema)
    return session


def load_extras(db, conn, session: Session, needs: set[Need], schema: SchemaReport | None) -> None:
    """Lifecycle rows (audit, plans, executions) for the needs that the schema can serve."""
    params = {"session_id": session.id}
    if Need.AUDIT in needs and _available(schema, Need.AUDIT):
        rows = db.query(conn, "session_audit", params, purpose="reading the audit log")
        session.extras["audit_log"] = [r.row for r in rows]
    if Need.PLANS in needs and _available(schema, Need.PLANS):
        rows = db.query(conn, "session_plan_steps", params, purpose="reading plans")
        session.extras["plans"] = plans_with_steps(r._mapping for r in rows)
    if Need.EXECUTIONS in needs and _available(schema, Need.EXECUTIONS):
        rows = db.query(conn, "session_executions", params, purpose="reading executions")
        session.extras["executions"] = [r.row for r in rows]


def plans_with_steps(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Plan rows joined with their steps (one row per step) folded into plans with a `steps` list."""
    plans: dict[str, dict[str, Any]] = {}
    for row in rows:
        plan = plans.setdefault(str(row["plan"].get("id")), {**row["plan"], "steps": []})
        if row["step"] is not None:
            plan["steps"].append(row["step"])
    return list(plans.values())


def _available(schema: SchemaReport | None, need: Need) -> bool:
    return schema is None or not schema.unmet(NEED_TABLES[need])


# ------------------------------------------------------------------ running rules
QueryFn = Callable[[str, Mapping[str, Any]], list[Mapping[str, Any]]]


def review(
    session: Session,
    ruleset: RuleSet,
    *,
    query: QueryFn | None = None,
    schema: SchemaReport | None = None,
    manager=None,
) -> Card:
    """Run every active rule on `session` (a raising rule becomes a card error) and build the card."""
    with contextlib.redirect_stdout(sys.stderr):  # a rule's print() must not land among the cards
        return _review(session, ruleset, query=query, schema=schema, manager=manager)


def _review(session: Session, ruleset: RuleSet, *, query, schema, manager) -> Card:
    Activity.session = session.id
    findings = []
    errors = list(ruleset.problems)
    ctx = RuleContext(query=query, schema=schema, grace=ruleset.grace)
    given = (session.info, session.messages, list(session.messages))  # rules share it: undo what one changes
    for active in ruleset.active:
        try:
            found = list(active.rule.check(session, ctx) or ())
        except BaseException as error:  # one broken rule must not hide the others' findings
            reraise_interrupt(error)
            errors.append(RuleError(active.rule.name, type(error).__name__, _error_message(error)))
            found = []
        finally:
            if _restored(session, given):
                errors.append(RuleError(active.rule.name, "SessionChanged",
                                        "check() replaced or resized the session's messages or info; undone"))
        if found:  # most rules find nothing in most sessions
            findings.extend(_valid(active.rule.name, found, errors, ruleset.bounds))
    findings.sort(key=lambda f: (-f.severity, f.code))
    if ruleset.fixes:
        _own_fixes(findings, ruleset.fixes)
    if findings:
        findings = _bound_card(findings, errors, ruleset.bounds)
    outcome, why, cited, ending_kind = verdict(session, findings, ruleset.grace)
    card = Card(
        session=session,
        stats=Stats.of(session),
        objective=objective_of(session),
        outcome=outcome,
        outcome_reason=why,
        outcome_message=cited,
        outcome_kind=ending_kind,
        findings=findings,
        errors=errors,
        skipped=list(ruleset.skipped),
        notes=_elision_notes(session) + bounded_notes([f"message {m.id}: content {UNREADABLE_NOTE}"
                                                       for m in session.messages if m.shape == "unreadable"],
                                                      ruleset.bounds),
    )
    if manager is not None:
        call_card_hook(manager, card, session)
    card.unexplained = read_failure(card)
    return card


def _own_fixes(findings: list[Finding], fixes: dict[str, str]) -> None:
    """The operator's fix text (config `[fixes]`) in place of the rule's, on each of its findings."""
    for finding in findings:
        own = fixes.get(finding.rule)
        if own is not None:
            finding.fix, finding.fix_source = own, "config"


def _valid(rule: str, found: list, errors: list[RuleError], bounds: Bounds = DEFAULT_BOUNDS) -> list[Finding]:
    """The findings of `found` that can be rendered, held to the card's bounds; what else a rule
    yielded becomes an error on the card naming the rule."""
    strays = [item for item in found if not isinstance(item, Finding)]
    if strays:
        errors.append(RuleError(rule, "TypeError", f"check() yielded {_safe_repr(strays[0])}, not a Finding"))
    found = [item for item in found if isinstance(item, Finding)]
    problems = [_malformed(item) or _bad_data(item, bounds) for item in found]
    if any(problems):
        first = next(problem for problem in problems if problem)
        errors.append(RuleError(rule, "TypeError", f"check() yielded a Finding whose {first}"))
    kept = [item for item, problem in zip(found, problems) if not problem]
    if len(kept) > bounds.findings_per_rule:
        errors.append(RuleError(rule, "TooManyFindings", f"check() yielded {len(kept):,} findings; the first "
                                f"{bounds.findings_per_rule} are kept (bounds.findings-per-rule)"))
        kept = kept[:bounds.findings_per_rule]
    for finding in kept:
        bound_finding(finding, bounds)
    return kept


def _elision_notes(session: Session) -> list[str]:
    elision = session.elision
    if elision is None:
        return []
    kept = len(session.messages)
    return [f"{elision.messages:,} messages: the rules read the first {elision.at:,} and the last "
            f"{kept - elision.at:,}; the {elision.left_out:,} between were counted, not read "
            f"(the counts above cover them all)"]


def _bound_card(findings: list[Finding], errors: list[RuleError], bounds: Bounds) -> list[Finding]:
    """The card's findings (worst first) within the per-card bounds."""
    if len(findings) > bounds.findings_per_card:
        errors.append(RuleError("engine", "TooManyFindings", f"{len(findings):,} findings; the worst "
                                f"{bounds.findings_per_card} are kept (bounds.findings-per-card)"))
        findings = findings[:bounds.findings_per_card]
    bound_card_evidence(findings, bounds)
    return findings


def _bad_data(finding: Finding, bounds: Bounds) -> str | None:
    problem = data_problem(finding.data, bounds) if finding.data else None
    return f"data {problem}" if problem else None


def _safe_repr(item: object) -> str:
    """`type value` for an error line, whatever the item's repr does (raise, run long)."""
    try:
        shown = f"{item!r:.80}"
    except BaseException as error:
        reraise_interrupt(error)
        shown = "(no repr)"
    return f"{type(item).__name__} {shown}"


def _restored(session: Session, given: tuple) -> bool:
    """Whether a rule replaced the session's info or messages or resized them; if so, put back
    what it was given (cheap checks: a rule that edits a message in place is not seen)."""
    info, messages, snapshot = given
    if session.info is info and session.messages is messages and len(messages) == len(snapshot):
        return False
    messages[:] = snapshot
    session.info, session.messages = info, messages
    return True


def _malformed(finding: Finding) -> str | None:
    """What makes a Finding impossible to sort or render (a field a rule set to another type), or None."""
    if not isinstance(finding.severity, Severity):
        return f"severity is {finding.severity!r:.40}, not a Severity"
    for name in ("rule", "code", "message", "root_cause", "fix"):
        if not isinstance(getattr(finding, name), str):
            return f"{name} is {getattr(finding, name)!r:.40}, not a string"
    if finding.blocker is not None and not isinstance(finding.blocker, str):
        return f"blocker is {finding.blocker!r:.40}, not a string or None"
    if not isinstance(finding.evidence, list) or not all(
        isinstance(e, Evidence) and isinstance(e.excerpt, str) for e in finding.evidence
    ):
        return f"evidence is {finding.evidence!r:.40}, not a list of Evidence"
    if not isinstance(finding.data, dict):
        return f"data is {finding.data!r:.40}, not a dict"
    return None


def call_card_hook(manager, card: Card, session: Session) -> None:
    """`nomos_forensics_card` through pluggy (pruning, ordering and wrappers as pluggy documents).

    An exception ends the call as pluggy ends it, and becomes a card error naming the plugin
    whose implementation raised it.
    """
    try:
        manager.hook.nomos_forensics_card(card=card, session=session)
    except BaseException as error:
        reraise_interrupt(error)
        card.errors.append(RuleError(_raising_plugin(manager, error), type(error).__name__, _error_message(error)))
    _drop_what_the_hook_broke(card)


def _drop_what_the_hook_broke(card: Card) -> None:
    """Items of another type a card hook put in the card's lists would crash every renderer:
    drop them, and say so on the card."""
    broken = []
    for name, keep in (("findings", lambda f: isinstance(f, Finding) and not _malformed(f)),
                       ("errors", lambda e: isinstance(e, RuleError)),
                       ("skipped", lambda s: isinstance(s, dict) and {"rule", "reason"} <= s.keys())):
        items = getattr(card, name)
        kept = [item for item in items if keep(item)] if isinstance(items, list) else []
        if not isinstance(items, list) or len(kept) != len(items):
            broken.append(name)
            setattr(card, name, kept)
    if broken:
        card.errors.append(RuleError("card hook", "TypeError",
                                     f"nomos_forensics_card left the card's {', '.join(broken)} with items of another type; dropped"))


def _raising_plugin(manager, error: BaseException) -> str:
    """The plugin whose card-hook implementation the traceback passes through last."""
    owners = {impl.function.__code__: impl.plugin_name
              for impl in manager.hook.nomos_forensics_card.get_hookimpls()
              if hasattr(impl.function, "__code__")}
    found = "card hook"
    for frame, _ in traceback.walk_tb(error.__traceback__):
        found = owners.get(frame.f_code, found)
    return found


def _error_message(error: BaseException) -> str:
    text = str(error).strip()
    if not text:
        frame = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
        return f"at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}" if frame else ""
    first = text.splitlines()[0]
    return first[:300]


def fail_on_reached(cards: Iterable[Card], fail_on: Severity | None) -> bool:
    return fail_on is not None and any(card.severity >= fail_on for card in cards)
