"""orphaned-approval: the session finished while approvals were still waiting for a person."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from nomos_forensics.rulekit import (
    Evidence,
    Finding,
    Message,
    Need,
    Rule,
    Session,
    Severity,
    excerpt,
    hookimpl,
    parse_timestamp,
)

PENDING = "pending_approval"


class OrphanedApproval(Rule):
    """The session finished while executions were still `pending_approval`.

    Detects: a session that finished, by a successful `complete_task` call or by status
    `completed`, while some of its `nomos_plan_executions` are still `pending_approval`. When
    only a `complete_task` call marks the end, approvals requested after that call are new
    and legitimately waiting, so only those requested before it count; with status `completed`
    every pending approval counts. Decided approvals (`approved`, `cancelled`, `expired`, ...)
    never count.
    Root cause: since the release, `complete_task` cancels the session's orphaned approvals;
    pending ones left behind mean the server predates that cleanup, the session was closed
    another way, or the cancel failed. The agent declared the task done while a mutation it
    asked for never ran, and the approval badge keeps asking a person to decide it.
    Fix: make `complete_task` cancel every `pending_approval` execution of the session (and
    report what it cancelled); have the agent wait for pending approvals, or say they were
    dropped, before calling `complete_task`.
    """

    code = "NF101"
    name = "orphaned-approval"
    severity = Severity.FRICTION
    needs = frozenset({Need.MESSAGES, Need.EXECUTIONS})
    requires = {"nomos_plan_executions": ("status", "requested_at")}

    def check(self, session: Session, ctx) -> Iterator[Finding]:
        pending = [
            e for e in session.extras.get("executions") or []
            if isinstance(e, Mapping) and _text(e.get("status")).lower() == PENDING
        ]
        if not pending:
            return
        status_completed = session.ending.status == "completed"
        completion = session.ending.completion
        if not status_completed and completion is None:
            return
        if not status_completed:
            cutoff = completion.created_at
            pending = [e for e in pending if _requested_before(e, cutoff)]
            if not pending:
                return
        evidence: list[Message | Evidence | tuple[Message, str]] = []
        if completion is not None:
            evidence.append((completion, completion.text or "(complete_task call)"))
        for row in pending[:10]:
            evidence.append(Evidence(None, session.turn_at(row.get("requested_at")), describe(row)))
        how = f"complete_task in turn {completion.turn}" if completion else "status completed"
        count = len(pending)
        yield self.finding(
            f"session finished ({how}) with {count} approval{'s' if count != 1 else ''}"
            f" still pending_approval",
            evidence,
        )


def describe(row: Mapping[str, Any]) -> str:
    tool = _text(row.get("tool")) or "(no tool)"
    command = _text(row.get("command"))
    since = _text(row.get("requested_at"))
    what = f"{tool} `{excerpt(command, 120)}`" if command else tool
    return f"execution {row.get('id')}: {what} pending_approval since {since or 'unknown'}"


def _requested_before(row: Mapping[str, Any], cutoff: datetime | None) -> bool:
    requested = parse_timestamp(row.get("requested_at"))
    if requested is None or cutoff is None:
        return True
    return requested <= cutoff


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


@hookimpl
def nomos_forensics_rules():
    return [OrphanedApproval]
