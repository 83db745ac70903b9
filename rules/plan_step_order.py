"""plan-step-order: a plan step ran while a step before it in the same generation had not."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from nomos_forensics.rulekit import Evidence, Finding, Need, Rule, Session, Severity, excerpt, hookimpl

STARTED = frozenset({"running", "done", "failed"})
WAITING = frozenset({"pending", "approved"})


class PlanStepOrder(Rule):
    """A plan step ran or finished while an earlier step of its generation was still waiting.

    Detects: within one plan and one generation, a step whose status is `running`, `done` or
    `failed` while a step with a lower `seq` is still `pending` or `approved`. Steps that were
    `skipped`, `replaced` or `cancelled` do not hold later steps back. One finding per plan
    generation, listing every step that ran ahead.
    Root cause: the release enforces `seq` order when plan steps execute; a step running ahead
    means the enforcement is missing (server older than the release) or bypassed (the agent
    ran the step's command directly with `run`, or an approval was granted out of order), so
    a later step may have acted on a state the earlier step was meant to prepare.
    Fix: enforce seq order in the plan executor (refuse a step while a lower-seq step of the
    same generation is pending or approved), and have the agent mark steps it deliberately
    leaves out as `skipped` instead of leaving them pending.
    """

    code = "NF102"
    name = "plan-step-order"
    severity = Severity.FRICTION
    needs = frozenset({Need.PLANS})
    # generation came with migration 020, together with seq-order enforcement itself
    requires = {"nomos_plan_steps": ("generation", "status")}

    def check(self, session: Session, ctx) -> Iterator[Finding]:
        for plan in _rows(session.extras.get("plans")):
            generations: dict[int, list[Mapping[str, Any]]] = {}
            for step in _rows(plan.get("steps")):
                if _int(step.get("seq")) is None:
                    continue
                generations.setdefault(_int(step.get("generation")) or 1, []).append(step)
            for generation, steps in sorted(generations.items()):
                violations = list(_ran_ahead(steps))
                if not violations:
                    continue
                plan_label = f"plan {str(plan.get('id') or '?')[:8]}"
                evidence = [
                    Evidence(None, session.turn_at(ahead.get("updated_at") or ahead.get("created_at")),
                             f"{plan_label} gen {generation}: {_step(ahead)} {_status(ahead)} while "
                             + ", ".join(f"{_step(w)} {_status(w)}" for w in waiting[:5]))
                    for ahead, waiting in violations
                ]
                first, waiting = violations[0]
                yield self.finding(
                    f"{plan_label} generation {generation}: {len(violations)} step"
                    f"{'s' if len(violations) != 1 else ''} ran out of seq order"
                    f" ({_step(first)} {_status(first)} while {_step(waiting[0])} {_status(waiting[0])})",
                    evidence,
                )


def _rows(value: Any) -> list[Mapping[str, Any]]:
    return [r for r in value if isinstance(r, Mapping)] if isinstance(value, list) else []


def _ran_ahead(steps: list[Mapping[str, Any]]):
    for step in sorted(steps, key=lambda s: (_int(s.get("seq")), _int(s.get("id")) or 0)):
        if _status(step) not in STARTED:
            continue
        seq = _int(step.get("seq"))
        waiting = [s for s in steps if _int(s.get("seq")) < seq and _status(s) in WAITING]
        if waiting:
            yield step, sorted(waiting, key=lambda s: _int(s.get("seq")))


def _step(step: Mapping[str, Any]) -> str:
    title = step.get("title")
    label = f"step {step.get('seq')}"
    return f"{label} \u201c{excerpt(title, 60)}\u201d" if isinstance(title, str) and title.strip() else label


def _status(step: Mapping[str, Any]) -> str:
    value = step.get("status")
    return value.strip().lower() if isinstance(value, str) else ""


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None




@hookimpl
def nomos_forensics_rules():
    return [PlanStepOrder]
