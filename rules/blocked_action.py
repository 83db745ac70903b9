"""blocked-action: the audit log blocked or denied an action of the session."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from nomos_forensics.rulekit import Evidence, Finding, Need, Rule, Session, Severity, excerpt, hookimpl, parse_timestamp

STOPPED = ("blocked", "denied", "rejected")
LET_THROUGH = ("allowed", "approved")
REASON_KEYS = ("reason", "message", "error", "policy", "detail")
COMMAND_KEYS = ("command", "cmd")


class BlockedAction(Rule):
    """An action of the session that the audit log records as `blocked` or `denied`.

    Detects: `audit_log` rows of the session whose outcome is `blocked` or `denied`, listing
    action, target, risk class and reason (from `detail`); identical rows (same outcome,
    action, target, command and reason) are one finding with a count. These are the card's
    "Blockers", as `blocked: run on lxc/105 (destructive): <reason>`. When a later row lets the
    same action on the same target (and command) through, `allowed` or `approved`, the block
    was resolved: it is still reported, as friction and without a Blockers line. `allowed`,
    `approved` and `error` rows alone never fire.
    Root cause: a policy stopped the agent (risk class above what the session may do without
    approval, a target outside its scope) or a person denied the approval. Either the agent
    chose an action it may not take, or the policy or the approval flow keeps it from a
    legitimate task.
    Fix: if the action was legitimate, adjust the policy for that risk class and target or ask
    for approval up front (propose_plan); if not, tighten SOUL.md so the agent picks a safer
    action, and have it tell the user what was blocked and why instead of retrying.
    """

    code = "NF105"
    name = "blocked-action"
    severity = Severity.BLOCKER
    needs = frozenset({Need.MESSAGES, Need.AUDIT})
    requires = {"audit_log": ("outcome", "action")}  # the rest is optional: read when present

    def check(self, session: Session, ctx) -> Iterator[Finding]:
        rows = [r for r in session.extras.get("audit_log") or [] if isinstance(r, Mapping)]
        if not any(_lower(row.get("outcome")) in STOPPED for row in rows):
            return  # most sessions: nothing was stopped, so no row needs its key
        keyed = [(row, _key(row)) for row in rows]
        groups: dict[tuple, list[Mapping[str, Any]]] = {}
        for row, key in keyed:
            if key[0] in STOPPED:
                groups.setdefault(key, []).append(row)
        for key, members in groups.items():
            outcome, action, target, risk, command, reason = key
            first = members[0]
            resolved = _resolved_later(keyed, first, key)
            where = f"{action or '(unknown action)'}" + (f" on {target}" if target else "")
            risk_part = f" ({risk})" if risk else ""
            actor = _text(first.get("actor"))
            by = f" by {actor}" if outcome != "blocked" and actor.startswith("user") else ""
            why = reason or (f"`{excerpt(command, 100)}`" if command else "")
            times = f" ({len(members)}\u00d7)" if len(members) > 1 else ""
            line = f"{outcome}: {where}{risk_part}{by}" + (f": {excerpt(why, 160)}" if why else "") + times
            described = f"{outcome} {where}{risk_part}" + (f" `{excerpt(command, 80)}`" if command else "") \
                + (f" \u2014 {reason}" if reason else "")
            evidence = [_evidence(session, r, action, f"audit {r.get('id')}: {described}") for r in members[:5]]
            if resolved:
                yield self.finding(
                    f"{line}; later {resolved}", evidence, severity=Severity.FRICTION, blocker=None,
                )
            else:
                yield self.finding(line, evidence, blocker=line)


def _evidence(session: Session, row: Mapping[str, Any], action: str, text: str) -> Evidence:
    turn = session.turn_at(row.get("created_at"))
    return Evidence(_calling_message(session, turn, action, row.get("created_at")), turn, text)


def _key(row: Mapping[str, Any]) -> tuple:
    detail = _detail(row.get("detail"))
    return (
        _lower(row.get("outcome")),
        _text(row.get("action")),
        _text(row.get("target")),
        _text(row.get("risk_class")),
        _first(detail, COMMAND_KEYS),
        _first(detail, REASON_KEYS) or (_text(row.get("detail")) if isinstance(row.get("detail"), str) else ""),
    )


def _resolved_later(keyed: list[tuple[Mapping[str, Any], tuple]], first: Mapping[str, Any], key: tuple) -> str | None:
    """The outcome of a later row that let the same action (target, command) through, if any."""
    _, action, target, _, command, _ = key
    seen = False
    for row, later in keyed:
        if row is first:
            seen = True
            continue
        if not seen or later[0] not in LET_THROUGH:
            continue
        if later[1] == action and later[2] == target and (not command or not later[4] or later[4] == command):
            return later[0]
    return None


def _detail(value: Any) -> Mapping[str, Any]:
    for _ in range(3):  # double-encoded detail
        if not isinstance(value, str):
            break
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, Mapping) else {}


def _first(detail: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    for key in keys:
        value = detail.get(key)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())
        if value is not None and not isinstance(value, (str, bool)) and value != []:
            return excerpt(json.dumps(value, ensure_ascii=False), 160)
    return ""


def _calling_message(session: Session, turn: int | None, action: str, at: Any) -> int | None:
    """The message that made the audited call: the last one calling `action` in `turn` at or
    before the audit time, else the turn's first such call (clocks of two writers may differ)."""
    calls = [m for m in session.messages
             if turn is not None and m.turn == turn and any(c.name == action for c in m.tool_calls)]
    if not calls:
        return None
    moment = parse_timestamp(at)
    before = [m for m in calls if moment and m.created_at and _not_after(m.created_at, moment)]
    return (before[-1] if before else calls[0]).id


def _not_after(stamp: datetime, moment: datetime) -> bool:
    try:
        return stamp <= moment
    except TypeError:  # naive vs aware
        return False




def _lower(value: Any) -> str:
    return _text(value).lower()


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


@hookimpl
def nomos_forensics_rules():
    return [BlockedAction]
