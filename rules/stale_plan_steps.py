"""stale-plan-steps: steps of a superseded plan generation are still pending."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from nomos_forensics.rulekit import Evidence, Finding, Need, Rule, Session, Severity, excerpt, hookimpl


class StalePlanSteps(Rule):
    """Steps of an older plan generation still `pending` instead of `replaced`.

    Detects: a `pending` plan step while a newer generation exists: a step with a higher
    `generation` in the same plan or in a plan proposed later in the session. Steps already
    `replaced`, `cancelled`, `skipped` or decided are fine; a plan proposed later with the same
    generation number is not taken as newer, and neither is a plan's own status `replaced`
    (sessions from before the release have one generation and never marked steps; they are
    not what this rule is about). One finding per plan that holds stale steps.
    Root cause: since the release, a new `propose_plan` marks the earlier generation's pending
    steps `replaced`; stale pending steps mean that marking did not run (server older than the
    release, or `propose_plan` failed half-way). The UI keeps offering superseded steps for
    approval next to the current plan, and approving one runs an outdated action.
    Fix: have `propose_plan` mark every pending step of earlier generations `replaced` in the
    same transaction that inserts the new generation, and clean up the stale steps shown here.
    """

    code = "NF103"
    name = "stale-plan-steps"
    severity = Severity.COSMETIC
    needs = frozenset({Need.PLANS})
    requires = {"nomos_plan_steps": ("generation", "status")}

    def check(self, session: Session, ctx) -> Iterator[Finding]:
        plans = _rows(session.extras.get("plans"))
        # newest generation proposed in this plan or any plan proposed after it
        newest_from: list[int] = []
        running_max = 0
        for plan in reversed(plans):
            running_max = max([running_max, *(_generation(s) for s in _rows(plan.get("steps")))])
            newest_from.append(running_max)
        newest_from.reverse()
        for plan, newest in zip(plans, newest_from):
            stale = [
                s for s in _rows(plan.get("steps"))
                if _lower(s.get("status")) == "pending" and _generation(s) < newest
            ]
            if not stale:
                continue
            label = f"plan {str(plan.get('id') or '?')[:8]}"
            evidence = [
                Evidence(None, None, f"{label} gen {_generation(s)}: {_step(s)} still pending"
                                     f" (generation {newest} exists)")
                for s in stale[:10]
            ]
            count = len(stale)
            yield self.finding(
                f"{label}: {count} step{'s' if count != 1 else ''} of an older generation still"
                f" pending (generation {newest} exists)",
                evidence,
            )


def _rows(value: Any) -> list[Mapping[str, Any]]:
    return [r for r in value if isinstance(r, Mapping)] if isinstance(value, list) else []


def _generation(step: Mapping[str, Any]) -> int:
    value = step.get("generation")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return 1


def _lower(value: Any) -> str:
    return value.strip().lower() if isinstance(value, str) else ""


def _step(step: Mapping[str, Any]) -> str:
    title = step.get("title")
    label = f"step {step.get('seq')}"
    return f"{label} \u201c{excerpt(title, 60)}\u201d" if isinstance(title, str) and title.strip() else label


@hookimpl
def nomos_forensics_rules():
    return [StalePlanSteps]
